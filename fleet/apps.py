from django.apps import AppConfig

from .periodic import PeriodicJob


class FleetConfig(AppConfig):
    name = "fleet"
    verbose_name = "Fleet kernel"
    default_auto_field = "django.db.models.BigAutoField"
    periodic_tasks: tuple = (
        # A late heartbeat is worthless: drop a tick the worker could not take in time.
        PeriodicJob(
            name="fleet: worker heartbeat", task="fleet.worker_heartbeat", every_seconds=30, expires_seconds=25
        ),
    )

    def ready(self):
        from .api import schema  # noqa: F401 - registers the OpenAPI security schemes
        from .crypto import key_ring

        key_ring()  # a malformed FLEET_ENCRYPTION_KEYS stops start-up, not the first save
        from .request_path import skip_no_op_cache_closing

        skip_no_op_cache_closing()
