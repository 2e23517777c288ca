"""Thin Celery tasks: load by id, call a service."""

from __future__ import annotations

from datetime import datetime

from celery import shared_task

from .services import deliveries_dispatch, deliveries_sweep, delivery_attempt


@shared_task(name="alerts.deliver", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def deliver(delivery_id: str) -> None:
    """One attempt of a delivery; the claim inside makes duplicate messages harmless."""
    delivery_attempt(delivery_id=delivery_id)


@shared_task(name="alerts.deliver_batch", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def deliver_batch(delivery_ids: list[str]) -> None:
    """Several deliveries: split into one task each, so a slow receiver delays no other."""
    deliveries_publish(delivery_ids)


@shared_task(name="alerts.dispatch_deliveries", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def dispatch_deliveries() -> None:
    """Queue the deliveries that fan-out committed since the last dispatch (services/dispatch.py)."""
    deliveries_dispatch()


@shared_task(name="alerts.sweep_deliveries", ignore_result=True)
def sweep_deliveries() -> None:
    deliveries_sweep()


def deliveries_enqueue(delivery_ids: list[str], *, eta: datetime | None = None) -> None:
    """Queue attempts: one message for a batch due now (split in the worker), one message per
    delivery for scheduled retries."""
    if len(delivery_ids) > 1 and eta is None:
        deliver_batch.apply_async((list(delivery_ids),))
    else:
        deliveries_publish(delivery_ids, eta=eta)


def deliveries_publish(delivery_ids: list[str], *, eta: datetime | None = None) -> None:
    """One deliver message per delivery."""
    if not delivery_ids:
        return
    with deliver.app.producer_or_acquire() as producer:  # one broker connection for the lot
        for delivery_id in delivery_ids:
            deliver.apply_async((delivery_id,), eta=eta, producer=producer)
