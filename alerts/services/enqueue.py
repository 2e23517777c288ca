"""Queueing delivery attempts: the services publish the tasks, the tasks call the services."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from fleet.task_queue import task_named

# The tasks (alerts.tasks) that call delivery_attempt, deliveries_publish and deliveries_attempt.
DELIVER_TASK = "alerts.deliver"
DELIVER_BATCH_TASK = "alerts.deliver_batch"
DELIVER_GROUP_TASK = "alerts.deliver_group"

# New deliveries of one channel per message, sent in turn by one worker. Publishing a message
# costs about 0.3 ms of CPU (Celery and kombu), a burst of 1,000 events about 3,000 deliveries:
# one message each would take most of a second to publish. Bounded, so that a receiver timing out
# on every attempt holds one worker for at most DELIVER_GROUP timeouts before the next message.
DELIVER_GROUP = 20


def deliveries_enqueue_on_commit(delivery_ids, *, eta: datetime | None = None) -> None:
    """Queue attempts once the surrounding transaction commits: one message for a batch due now
    (split in the worker), one message per delivery for scheduled retries."""
    ids = [str(delivery_id) for delivery_id in delivery_ids]
    if len(ids) > 1 and eta is None:
        task_named(DELIVER_BATCH_TASK).delay_on_commit(ids)
        return
    deliver = task_named(DELIVER_TASK)
    for delivery_id in ids:
        deliver.apply_async_on_commit((delivery_id,), eta=eta)


def deliveries_publish(delivery_ids, *, eta: datetime | None = None) -> None:
    """One deliver message per delivery, now (a worker splitting a batch)."""
    if not delivery_ids:
        return
    deliver = task_named(DELIVER_TASK)
    with deliver.app.producer_or_acquire() as producer:  # one broker connection for the lot
        for delivery_id in delivery_ids:
            deliver.apply_async((str(delivery_id),), eta=eta, producer=producer)


def deliveries_publish_by_channel(deliveries: Iterable) -> int:
    """Publish new deliveries (with `id` and `channel_id`), due now: one message per channel and
    DELIVER_GROUP of its deliveries, so a slow receiver holds up its own deliveries and no
    other's. The number of messages is returned."""
    groups = deliveries_grouped(deliveries)
    if not groups:
        return 0
    deliver, deliver_group = task_named(DELIVER_TASK), task_named(DELIVER_GROUP_TASK)
    with deliver.app.producer_or_acquire() as producer:
        for ids in groups:
            if len(ids) == 1:
                deliver.apply_async((ids[0],), producer=producer)
            else:
                deliver_group.apply_async((ids,), producer=producer)
    return len(groups)


def deliveries_grouped(deliveries: Iterable) -> list[list[str]]:
    """The ids of `deliveries` by channel, in their order, in groups of at most DELIVER_GROUP."""
    by_channel: dict = {}
    for delivery in deliveries:
        by_channel.setdefault(delivery.channel_id, []).append(str(delivery.id))
    return [ids[i:i + DELIVER_GROUP] for ids in by_channel.values() for i in range(0, len(ids), DELIVER_GROUP)]
