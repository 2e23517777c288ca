from django.apps import AppConfig


class TargetsConfig(AppConfig):
    name = "agents.targets"
    label = "targets"
    verbose_name = "Deploy targets"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from accounts.deletion import user_holder_register

        from .remote_hosts import remote_hosts_holding
        from .rows import target_rows_fill

        user_holder_register(remote_hosts_holding)  # a user's hosts in use keep the user; idle ones go along
        target_rows_fill()  # remote:<id> and k8s:<id> get their backends
