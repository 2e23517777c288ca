from django.apps import AppConfig


class WorkspacesConfig(AppConfig):
    name = "workspaces"
    default_auto_field = "django.db.models.BigAutoField"
    # Jobs for celery beat (fleet.periodic.PeriodicJob), installed by setup_periodic_tasks.
    periodic_tasks: tuple = ()
