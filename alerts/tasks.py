"""Thin Celery tasks: load by id, call a service. The services start them by name
(alerts.services.enqueue, dispatch)."""

from __future__ import annotations

from celery import shared_task

from .services import (
    deliveries_attempt,
    deliveries_dispatch,
    deliveries_publish,
    deliveries_sweep,
    delivery_attempt,
)
from .services.dispatch import DISPATCH_TASK
from .services.enqueue import DELIVER_BATCH_TASK, DELIVER_GROUP_TASK, DELIVER_TASK


@shared_task(name=DELIVER_TASK, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def deliver(delivery_id: str) -> None:
    """One attempt of a delivery; the claim inside makes duplicate messages harmless."""
    delivery_attempt(delivery_id=delivery_id)


@shared_task(name=DELIVER_BATCH_TASK, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def deliver_batch(delivery_ids: list[str]) -> None:
    """Several deliveries: split into one task each, so a slow receiver delays no other."""
    deliveries_publish(delivery_ids)


@shared_task(name=DELIVER_GROUP_TASK, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def deliver_group(delivery_ids: list[str]) -> None:
    """New deliveries of one channel, attempted in turn (services/enqueue.py, DELIVER_GROUP)."""
    deliveries_attempt(delivery_ids=delivery_ids)


@shared_task(name=DISPATCH_TASK, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def dispatch_deliveries() -> None:
    """Fan out the events stored since the last dispatch and queue their deliveries (services/dispatch.py)."""
    deliveries_dispatch()


@shared_task(name="alerts.sweep_deliveries", ignore_result=True)
def sweep_deliveries() -> None:
    deliveries_sweep()
