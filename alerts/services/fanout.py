"""From an emitted event to deliveries: subscribed to fleet.events in AlertsConfig.ready().

One query loads the channels of every enabled rule in the event's workspaces, the patterns are
matched in Python, one INSERT creates the deliveries; after commit the webhooks are queued and
the emails sent inline (a failed email is retried on the webhook schedule by the worker).
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from fleet.models import Event

from ..models import AlertChannel, ChannelType, Delivery
from ..patterns import pattern_matches
from .delivery import delivery_attempt, delivery_enqueue_on_commit

TEST_RULE_KEY = "ruleId"  # a test event names the one rule it is for


def event_fan_out(event: Event) -> list[Delivery]:
    """Create and dispatch the deliveries of one event; the deliveries made are returned."""
    deliveries = deliveries_create(event=event)
    for delivery in deliveries:
        if delivery.channel_type == ChannelType.EMAIL:
            delivery_attempt(delivery_id=delivery.id)
    return deliveries


def _matching_channels(event: Event) -> list[dict]:
    test_rule_id = event.data.get(TEST_RULE_KEY) if event.test and isinstance(event.data, dict) else None
    if test_rule_id:
        # A rule's test goes to that rule alone, whatever its pattern, even while it is disabled.
        rows = AlertChannel.objects.filter(rule_id=test_rule_id, rule__workspace_id__in=event.workspace_ids)
        return list(rows.values("id", "rule_id", "type"))
    if not event.workspace_ids:
        return []
    rows = AlertChannel.objects.filter(rule__workspace_id__in=event.workspace_ids, rule__enabled=True)
    return [
        row
        for row in rows.values("id", "rule_id", "type", "rule__event_pattern")
        if pattern_matches(row["rule__event_pattern"], event.kind)
    ]


@transaction.atomic
def deliveries_create(*, event: Event) -> list[Delivery]:
    """One pending Delivery per matching channel; webhooks are queued when this commits.

    Idempotent: a channel already holding a delivery of this event keeps it (the returned copy
    of such a row is never saved, and a task for its id finds nothing to claim).
    """
    now = timezone.now()
    deliveries = [
        Delivery(
            rule_id=row["rule_id"], channel_id=row["id"], event=event, channel_type=row["type"], next_attempt_at=now
        )
        for row in _matching_channels(event)
    ]
    if not deliveries:
        return []
    Delivery.objects.bulk_create(deliveries, ignore_conflicts=True)
    delivery_enqueue_on_commit(
        delivery_ids=[d.id for d in deliveries if d.channel_type == ChannelType.WEBHOOK]
    )
    return deliveries
