"""Fan-out and transactions: the emitter's transaction stores the event alone, nothing leaves the
process before it has committed, and a fan-out that fails leaves its events waiting."""

import logging

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from alerts import tasks
from alerts.models import ChannelType, Delivery
from alerts.services import FAN_OUT_GRACE, deliveries_dispatch, deliveries_sweep, fanout, fanout_insert
from fleet import events
from fleet.models import Event
from tests.factories.alerts import make_rule, webhook

HOOK = "http://127.0.0.1:9/hook"


@pytest.fixture
def rules(tenancy):
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], name="hook")
    make_rule(workspace=tenancy.workspace, channels=[{"type": "email", "to": ["ops@example.com"]}], name="mail")


def waiting() -> list:
    return list(Event.objects.filter(fanned_out_at__isnull=True).values_list("pk", flat=True))


def test_the_emitter_stores_the_event_alone_and_a_dispatch_after_its_commit_fans_it_out(
    tenancy, rules, published, transactional_db
):
    with transaction.atomic():
        with CaptureQueriesContext(connection) as queries:
            event = events.emit("agent.error", workspace_ids=[tenancy.workspace.id])
        assert len(queries) == 1  # the Event's INSERT: no matching in the emitter's transaction
        assert published.dispatches == 0  # not before the commit

    assert published.dispatches == 1
    assert waiting() == [event.pk] and not Delivery.objects.exists()

    assert deliveries_dispatch() == 2

    made = Delivery.objects.filter(event=event)
    assert sorted(made.values_list("channel_type", flat=True)) == [ChannelType.EMAIL, ChannelType.WEBHOOK]
    assert sorted(published.deliveries) == sorted(str(pk) for pk in made.values_list("id", flat=True))
    assert waiting() == []


def test_a_rolled_back_emit_leaves_nothing_to_fan_out_and_sends_nothing(
    tenancy, rules, published, smtp_server, transactional_db
):
    with pytest.raises(RuntimeError), transaction.atomic():
        events.emit("agent.error", workspace_ids=[tenancy.workspace.id])
        raise RuntimeError("the operation failed")

    assert deliveries_dispatch() == 0
    assert not Event.objects.exists() and not Delivery.objects.exists()
    assert published.dispatches == 0 and published.deliveries == []
    assert smtp_server.messages == []


def test_a_dispatch_dying_between_the_claim_and_the_match_leaves_the_events_for_the_next(
    tenancy, rules, published, monkeypatch, transactional_db
):
    fired = [events.emit("agent.error", workspace_ids=[tenancy.workspace.id]) for _ in range(3)]
    claimed = []
    insert = fanout.deliveries_insert

    def claim_then_die(*, events, now):
        claimed.extend(event.id for event in events)
        raise RuntimeError("worker killed")

    monkeypatch.setattr(fanout, "deliveries_insert", claim_then_die)
    with pytest.raises(RuntimeError):
        deliveries_dispatch()

    assert sorted(claimed) == sorted(e.pk for e in fired)  # the claim had run...
    assert sorted(waiting()) == sorted(claimed)  # ...and was rolled back with its transaction
    assert not Delivery.objects.exists() and published.deliveries == []

    monkeypatch.setattr(fanout, "deliveries_insert", insert)
    assert deliveries_dispatch() == 6
    assert waiting() == [] and len(set(published.deliveries)) == 6


def test_a_match_the_database_refuses_rolls_back_its_claim(tenancy, rules, published, monkeypatch, transactional_db):
    event = events.emit("agent.error", workspace_ids=[tenancy.workspace.id])
    broken = dict.fromkeys(fanout_insert._NEW_ID, "no_such_function()")

    with monkeypatch.context() as patched:
        patched.setattr(fanout_insert, "_NEW_ID", broken)
        with pytest.raises(Exception, match="no_such_function"):
            deliveries_dispatch()
        assert waiting() == [event.pk]

    assert deliveries_dispatch() == 2


def test_a_broker_outage_after_the_commit_does_not_fail_the_emitter_and_the_sweep_catches_up(
    tenancy, published, monkeypatch, caplog, transactional_db
):
    def broker_down(*args, **kwargs):
        raise ConnectionError("broker down")

    monkeypatch.setattr(tasks.dispatch_deliveries, "apply_async", broker_down)
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)])

    with caplog.at_level(logging.ERROR):
        event = events.emit("agent.error", workspace_ids=[tenancy.workspace.id])

    assert "broker down" in caplog.text
    assert waiting() == [event.pk]  # committed, waiting for a dispatch

    assert deliveries_sweep(now=timezone.now() + FAN_OUT_GRACE) == 1
    assert published.deliveries == [str(Delivery.objects.get(event=event).id)]
    assert waiting() == []
