"""From an emitted event to deliveries: subscribed to fleet.events in AlertsConfig.ready().

One statement matches the event against the enabled rules of its workspaces and inserts a
delivery per matching channel (services/fanout_insert.py); once that has committed, a dispatch
of the webhooks is requested (services/dispatch.py: a cache round trip, rarely a broker message)
and the emails are sent inline (a failed email is retried on the webhook schedule by the worker).
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
    """Create and dispatch the deliveries of one event; the deliveries made are returned."""
    deliveries = deliveries_create(event=event)
    for delivery in deliveries:
        if delivery.channel_type == ChannelType.EMAIL:
            delivery_attempt(delivery_id=delivery.id)
    return deliveries


def deliveries_create(*, event: Event) -> list[Delivery]:
    """One pending Delivery per matching channel; webhooks are dispatched once the rows commit.

    Idempotent: a channel already holding a delivery of this event keeps it, and only the
    deliveries inserted now are returned.
    """
    test_rule_id = event.data.get(TEST_RULE_KEY) if event.test and isinstance(event.data, dict) else None
    deliveries = deliveries_insert(event=event, now=timezone.now(), test_rule_id=test_rule_id)
    if any(d.channel_type == ChannelType.WEBHOOK for d in deliveries):
        transaction.on_commit(dispatch_request)  # at once in autocommit, where fleet.events calls us
    return deliveries
