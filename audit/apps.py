from django.apps import AppConfig

from fleet.periodic import PeriodicJob


class AuditConfig(AppConfig):
    name = "audit"
    default_auto_field = "django.db.models.BigAutoField"
    # Once an hour: rows older than AUDIT_RETENTION_DAYS leave (audit.retention).
    periodic_tasks: tuple = (
        PeriodicJob(name="audit: purge", task="audit.purge", every_seconds=3600, expires_seconds=3300),
    )

    def ready(self) -> None:
        from . import console, hooks

        hooks.install()
        console.install()
