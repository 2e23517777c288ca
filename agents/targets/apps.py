from django.apps import AppConfig


class TargetsConfig(AppConfig):
    name = "agents.targets"
    label = "targets"
    verbose_name = "Deploy targets"
    default_auto_field = "django.db.models.BigAutoField"
