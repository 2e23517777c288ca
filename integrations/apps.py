from django.apps import AppConfig

from fleet.periodic import PeriodicJob

# When a runtime (re)appears, the integrations' variables and MCP servers are applied to it.
RUNTIME_UP_EVENTS = ("agent.running", "agent.started", "agent.restarted")


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
        from .services import workload_env

        register_workload_env("integrations", workload_env)
        events.subscribe(on_event)


def on_event(event) -> None:
    """After commit: a runtime that came up gets the integrations' state (only agents that have
    integrations, so other agents' starts cost nothing)."""
    if event.kind not in RUNTIME_UP_EVENTS or event.agent_id is None:
        return
    from .models import Integration
    from .tasks import apply_runtime_state

    if Integration.objects.filter(agent_id=event.agent_id).exists():
        apply_runtime_state.delay_on_commit(str(event.agent_id), True)
