from django.apps import AppConfig


class ChannelsConfig(AppConfig):
    name = "channels"
    verbose_name = "Agent channels"
    default_auto_field = "django.db.models.BigAutoField"
    # Jobs for celery beat (fleet.periodic.PeriodicJob), installed by setup_periodic_tasks.
    periodic_tasks: tuple = ()

    def ready(self) -> None:
        from fleet import events

        from .events import on_agent_event

        # After commit: the agent's new state is visible to the task that pushes the channels.
        events.subscribe(on_agent_event)
