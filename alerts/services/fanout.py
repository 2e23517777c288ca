"""From an emitted event to deliveries: subscribed to fleet.events in AlertsConfig.ready() to run
inside the emitter's transaction (in a savepoint), right after the Event row is inserted.

One statement matches the event against the enabled rules of its workspaces and inserts a
delivery per matching channel (services/fanout_insert.py); the rows commit with the event, so
an event is never stored without its deliveries and the fan-out costs no commit of its own. What
must not happen for a rolled-back event waits for the commit (`transaction.on_commit`): the
dispatch of the webhooks (services/dispatch.py: a cache round trip, rarely a broker message) and
the emails' first attempt, made inline (a failed email is retried on the webhook schedule by the
worker). Should the process die between the commit and those, the minute sweep
(`deliveries_sweep`) queues the deliveries.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from fleet.models import Event

from ..models import ChannelType, Delivery
from .delivery import delivery_attempt
from .dispatch import dispatch_request
from .fanout_insert import deliveries_insert

TEST_RULE_KEY = "ruleId"  # a test event names the one rule it is for


def event_fan_out(event: Event) -> list[Delivery]:
    """Create the deliveries of one event; once they commit, dispatch the webhooks and send the
    emails. The deliveries made are returned."""
    deliveries = deliveries_create(event=event)
    for delivery in deliveries:
        if delivery.channel_type == ChannelType.EMAIL:
            # robust: a failure after the commit is logged, never raised into the emitter.
            transaction.on_commit(lambda pk=delivery.id: delivery_attempt(delivery_id=pk), robust=True)
    return deliveries


def deliveries_create(*, event: Event) -> list[Delivery]:
    """One pending Delivery per matching channel; webhooks are dispatched once the rows commit.

    Idempotent: a channel already holding a delivery of this event keeps it, and only the
    deliveries inserted now are returned.
    """
    test_rule_id = event.data.get(TEST_RULE_KEY) if event.test and isinstance(event.data, dict) else None
    deliveries = deliveries_insert(event=event, now=timezone.now(), test_rule_id=test_rule_id)
    if any(d.channel_type == ChannelType.WEBHOOK for d in deliveries):
        # robust: a broker outage must not fail the emitter's operation after its commit; the
        # rows wait for the next dispatch or the sweep.
        transaction.on_commit(dispatch_request, robust=True)
    return deliveries
