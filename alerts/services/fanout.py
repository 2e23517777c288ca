"""From emitted events to deliveries, a burst at a time.

Emitting an event only stores it (fleet.events) and, after the commit, asks for a dispatch
(services/dispatch.py: a cache round trip, a broker message per burst). The dispatch task then
fans out every event still waiting: in one transaction it claims a batch of them and inserts the
deliveries of every channel they match in one statement (services/fanout_insert.py), marked
queued; once that has committed it publishes them, one message per channel and 20 deliveries
(services/enqueue.py). An event is matched exactly once: the claim decides who matches it, and
a rolled-back claim (a failed statement, a worker killed mid-way) leaves the events waiting.
Events a lost dispatch left behind are fanned out by the minute sweep (`deliveries_sweep`,
events waiting longer than FAN_OUT_GRACE); a worker dying between the commit and the publishing
leaves queued deliveries that the same sweep publishes again.

A rule's test is fanned out at once, in the emitter's transaction (`alert_rule_test`), so that
its emails can be sent before the route answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from .enqueue import deliveries_publish_by_channel
from .fanout_insert import TEST_RULE_KEY, NewDelivery, deliveries_insert, events_claim

__all__ = ["FAN_OUT_BATCH", "FAN_OUT_GRACE", "TEST_RULE_KEY", "FanOut", "events_fan_out",
           "events_fan_out_and_publish"]

FAN_OUT_BATCH = 1000  # events claimed and matched per transaction; a dispatch loops until none is left
# How long an event may wait for its dispatch before the minute sweep fans it out itself:
# longer than a dispatch takes to start in a busy queue, as long as the pending flag lives.
FAN_OUT_GRACE = timedelta(seconds=10)


@dataclass(frozen=True)
class FanOut:
    at: datetime  # the events' fanned_out_at, and the deliveries' creation and queueing time
    event_ids: list = field(default_factory=list)  # the events claimed, each matched here only
    deliveries: list[NewDelivery] = field(default_factory=list)


@transaction.atomic
def events_fan_out(*, now: datetime | None = None, event_ids=None, occurred_before: datetime | None = None,
                   limit: int | None = None) -> FanOut:
    """Claim up to `limit` waiting events (FAN_OUT_BATCH) and insert their deliveries, in one
    transaction. `event_ids` and `occurred_before` narrow the events taken."""
    now = now or timezone.now()
    claimed = events_claim(now=now, limit=limit or FAN_OUT_BATCH, event_ids=event_ids,
                           occurred_before=occurred_before)
    return FanOut(at=now, event_ids=[event.id for event in claimed],
                  deliveries=deliveries_insert(events=claimed, now=now) if claimed else [])


def events_fan_out_and_publish(*, occurred_before: datetime | None = None) -> int:
    """Fan out every waiting event, batch by batch, publishing each batch's deliveries once its
    transaction has committed; the number of deliveries published is returned. Called outside
    any transaction (a task): a message must not reach a worker before its row has committed."""
    published = 0
    while True:
        batch = events_fan_out(occurred_before=occurred_before)
        # Queued in the database before the publishing: a crash in between leaves them to the sweep.
        deliveries_publish_by_channel(batch.deliveries)
        published += len(batch.deliveries)
        if len(batch.event_ids) < FAN_OUT_BATCH:
            return published
