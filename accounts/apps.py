from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    default_auto_field = "django.db.models.BigAutoField"
    # Jobs for celery beat (fleet.periodic.PeriodicJob), installed by setup_periodic_tasks.
    periodic_tasks: tuple = ()

    def ready(self) -> None:
        from . import signals  # noqa: F401  (the user cache follows every change to a user)
