"""Thin Celery tasks: load by id, call a service.

Services publish these tasks (alerts.services.enqueue, dispatch); a task body imports the
service it calls when it runs, so the two never import each other at load time.
"""

from __future__ import annotations

from celery import shared_task


@shared_task(name="alerts.deliver", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def deliver(delivery_id: str) -> None:
    """One attempt of a delivery; the claim inside makes duplicate messages harmless."""
    from .services import delivery_attempt

    delivery_attempt(delivery_id=delivery_id)


@shared_task(name="alerts.deliver_batch", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def deliver_batch(delivery_ids: list[str]) -> None:
    """Several deliveries: split into one task each, so a slow receiver delays no other."""
    from .services import deliveries_publish

    deliveries_publish(delivery_ids)


@shared_task(name="alerts.deliver_group", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def deliver_group(delivery_ids: list[str]) -> None:
    """New deliveries of one channel, attempted in turn (services/enqueue.py, DELIVER_GROUP)."""
    from .services import deliveries_attempt

    deliveries_attempt(delivery_ids=delivery_ids)


@shared_task(name="alerts.dispatch_deliveries", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def dispatch_deliveries() -> None:
    """Fan out the events stored since the last dispatch and queue their deliveries (services/dispatch.py)."""
    from .services import deliveries_dispatch

    deliveries_dispatch()


@shared_task(name="alerts.sweep_deliveries", ignore_result=True)
def sweep_deliveries() -> None:
    from .services import deliveries_sweep

    deliveries_sweep()
