from django.apps import AppConfig

from fleet.periodic import PeriodicJob


class BackupsConfig(AppConfig):
    """Backups of agents' state (the export bundle) to a folder or S3-compatible storage, on a
    schedule and on demand, with retention and restore. Above agents (its export, drafts and
    lifecycle), beside alerts, channels, integrations, sandbox and model_gateway, which it never
    imports: its `backup.*` events reach alert rules through fleet.events like any other."""

    name = "backups"
    default_auto_field = "django.db.models.BigAutoField"
    periodic_tasks: tuple = (
        PeriodicJob(name="backups: queue the scheduled backups that are due",
                    task="backups.tasks.queue_due", every_seconds=60, expires_seconds=50),
    )

    def ready(self):
        from agents.console.page import PageSection, register_page_section

        from . import checks  # noqa: F401 - registers the system checks
        from .page import TEMPLATE, backups_card

        register_page_section("backups", PageSection(TEMPLATE, backups_card))
