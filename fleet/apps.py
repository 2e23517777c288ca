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
        from .health import health_check_register
        from .metrics import register_gauge
        from .scheduler import late_jobs_gauge, scheduler_report, since_run_gauge

        health_check_register("scheduler", scheduler_report)  # checks.scheduler: a word per periodic job
        register_gauge("fleet_periodic_job_late", "1 when a periodic job has not run for three of its periods.",
                       late_jobs_gauge, labelnames=("job",))
        register_gauge("fleet_periodic_job_seconds_since_run", "Seconds since a periodic job last ran "
                       "(the older of beat's send and a worker's run).", since_run_gauge, labelnames=("job",))
