"""Fan-out inside the emitter's transaction: an event and its deliveries commit together, and
nothing leaves the process (dispatch, email) before they have."""

import logging

import pytest
from django.db import transaction

from alerts import tasks
from alerts.models import ChannelType, Delivery, DeliveryStatus
from alerts.services import fanout_insert
from fleet import events
from fleet.models import Event
from tests.factories.alerts import make_rule, webhook

HOOK = "http://127.0.0.1:9/hook"


@pytest.fixture
def rules(tenancy):
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], name="hook")
    make_rule(workspace=tenancy.workspace, channels=[{"type": "email", "to": ["ops@example.com"]}], name="mail")


def test_the_deliveries_are_made_in_the_emitters_transaction_and_sent_after_its_commit(
    tenancy, rules, published, smtp_server, transactional_db
):
    with transaction.atomic():
        event = events.emit("agent.error", workspace_ids=[tenancy.workspace.id])
        made = Delivery.objects.filter(event=event)
        assert sorted(made.values_list("channel_type", flat=True)) == [ChannelType.EMAIL, ChannelType.WEBHOOK]
        assert published.dispatches == 0 and smtp_server.messages == []  # not before the commit

    assert published.dispatches == 1
    assert len(smtp_server.messages) == 1
    assert Delivery.objects.get(event=event, channel_type=ChannelType.EMAIL).status == DeliveryStatus.SUCCEEDED


def test_a_rolled_back_emit_leaves_no_event_no_delivery_and_sends_nothing(
    tenancy, rules, published, smtp_server, transactional_db
):
    with pytest.raises(RuntimeError), transaction.atomic():
        events.emit("agent.error", workspace_ids=[tenancy.workspace.id])
        assert Delivery.objects.count() == 2
        raise RuntimeError("the operation failed")

    assert not Event.objects.exists() and not Delivery.objects.exists()
    assert published.dispatches == 0
    assert smtp_server.messages == []


def test_a_failing_fan_out_is_logged_and_the_emitters_transaction_carries_on(
    tenancy, rules, published, monkeypatch, caplog, transactional_db
):
    # A statement the database refuses, as a real fault would be: without a savepoint it would
    # abort the emitter's whole transaction on PostgreSQL.
    monkeypatch.setattr(fanout_insert, "_NEW_ID", dict.fromkeys(fanout_insert._NEW_ID, "no_such_function()"))

    with caplog.at_level(logging.ERROR, logger="fleet.events"), transaction.atomic():
        event = events.emit("agent.error", workspace_ids=[tenancy.workspace.id])
        tenancy.workspace.name = "renamed after the emit"
        tenancy.workspace.save(update_fields=["name"])

    assert "no_such_function" in caplog.text
    assert Event.objects.filter(pk=event.pk).exists()
    assert not Delivery.objects.exists()
    assert published.dispatches == 0
    tenancy.workspace.refresh_from_db()
    assert tenancy.workspace.name == "renamed after the emit"


def test_a_broker_outage_after_the_commit_does_not_fail_the_emitter(
    tenancy, monkeypatch, caplog, transactional_db
):
    def broker_down(*args, **kwargs):
        raise ConnectionError("broker down")

    monkeypatch.setattr(tasks.dispatch_deliveries, "apply_async", broker_down)
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)])

    with caplog.at_level(logging.ERROR):
        event = events.emit("agent.error", workspace_ids=[tenancy.workspace.id])

    assert "broker down" in caplog.text
    # Committed with its event; the next dispatch or the minute sweep queues it.
    assert Delivery.objects.get(event=event).status == DeliveryStatus.PENDING
