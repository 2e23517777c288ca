from django.apps import AppConfig


class SandboxConfig(AppConfig):
    name = "sandbox"
    default_auto_field = "django.db.models.BigAutoField"
    # Jobs for celery beat (fleet.periodic.PeriodicJob), installed by setup_periodic_tasks.
    periodic_tasks: tuple = ()

    def ready(self) -> None:
        from .subscriptions import register

        register()
