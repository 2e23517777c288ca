from django.apps import AppConfig

from fleet.periodic import PeriodicJob


class ChannelsConfig(AppConfig):
    name = "channels"
    verbose_name = "Agent channels"
    default_auto_field = "django.db.models.BigAutoField"
    # Jobs for celery beat (fleet.periodic.PeriodicJob), installed by setup_periodic_tasks.
    periodic_tasks: tuple = (
        # Inbound messages a killed worker left claimed, or whose task the broker lost.
        PeriodicJob(name="channels: sweep inbound", task="channels.sweep_inbound", every_seconds=60,
                    expires_seconds=55),
    )

    def ready(self) -> None:
        from fleet import events

        from .events import on_agent_event

        # After commit: the agent's new state is visible to the task that pushes the channels.
        events.subscribe(on_agent_event)
