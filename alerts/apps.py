from django.apps import AppConfig

from fleet.periodic import PeriodicJob


class AlertsConfig(AppConfig):
    name = "alerts"
    default_auto_field = "django.db.models.BigAutoField"
    # Jobs for celery beat (fleet.periodic.PeriodicJob), installed by setup_periodic_tasks.
    periodic_tasks: tuple = (
        # Re-queue deliveries whose task was lost (broker restart, a worker killed past its lease).
        PeriodicJob(name="alerts: sweep deliveries", task="alerts.sweep_deliveries", every_seconds=60,
                    expires_seconds=55),
    )

    def ready(self) -> None:
        from fleet import events

        from .services import event_dispatch_request

        # After the emitter's commit: the event is stored; a dispatch matches the burst it is in.
        events.subscribe(event_dispatch_request)
