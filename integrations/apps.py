from django.apps import AppConfig

from fleet.periodic import PeriodicJob


class IntegrationsConfig(AppConfig):
    name = "integrations"
    default_auto_field = "django.db.models.BigAutoField"
    # Jobs for celery beat (fleet.periodic.PeriodicJob), installed by setup_periodic_tasks.
    periodic_tasks: tuple = (
        # Tokens are refreshed ahead of expiry by a margin of minutes (X) or days (LinkedIn).
        PeriodicJob(name="integrations: refresh OAuth tokens", task="integrations.refresh_oauth_tokens",
                    every_seconds=300, expires_seconds=290),
    )

    def ready(self) -> None:
        from agents.services.workload import register_workload_env
        from fleet import events

        from . import tasks  # noqa: F401 - registers the tasks
        from .events import on_agent_event
        from .services import workload_env

        register_workload_env("integrations", workload_env)
        events.subscribe(on_agent_event)

