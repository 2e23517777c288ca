from django.apps import AppConfig


class SealedAppConfig(AppConfig):
    """A test-only app, installed by the `sealed_notes` fixture, holding an encrypted field."""

    name = "tests.fleet.sealedapp"
    label = "fleet_sealedapp"
    default_auto_field = "django.db.models.BigAutoField"
