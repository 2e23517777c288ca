"""Queueing delivery attempts: the services publish the tasks, the tasks call the services."""

from __future__ import annotations

from datetime import datetime

from ..tasks import deliver, deliver_batch


def deliveries_enqueue_on_commit(delivery_ids, *, eta: datetime | None = None) -> None:
    """Queue attempts once the surrounding transaction commits: one message for a batch due now
    (split in the worker), one message per delivery for scheduled retries."""
    ids = [str(delivery_id) for delivery_id in delivery_ids]
    if len(ids) > 1 and eta is None:
        deliver_batch.delay_on_commit(ids)
        return
    for delivery_id in ids:
        deliver.apply_async_on_commit((delivery_id,), eta=eta)


def deliveries_publish(delivery_ids, *, eta: datetime | None = None) -> None:
    """One deliver message per delivery, now (a worker splitting a batch, a dispatch)."""
    if not delivery_ids:
        return
    with deliver.app.producer_or_acquire() as producer:  # one broker connection for the lot
        for delivery_id in delivery_ids:
            deliver.apply_async((str(delivery_id),), eta=eta, producer=producer)
