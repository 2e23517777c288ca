"""Dispatch of new deliveries: one broker message per burst of events, and none left behind."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from alerts import tasks
from alerts.models import Delivery, DeliveryStatus
from alerts.services import deliveries_dispatch, dispatch, dispatch_request
from fleet import events
from fleet.models import Event
from tests.factories.alerts import make_rule, webhook
from tests.support import run_in_threads

HOOK = "http://127.0.0.1:9/hook"


def fire(capture, workspace, kind="agent.error"):
    with capture(execute=True):
        return events.emit(kind, workspace_ids=[workspace.id])


@pytest.mark.django_db
def test_a_burst_of_events_publishes_one_dispatch_which_queues_every_delivery(
    tenancy, published, django_capture_on_commit_callbacks
):
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)])
    fired = [fire(django_capture_on_commit_callbacks, tenancy.workspace) for _ in range(5)]

    assert published.dispatches == 1
    assert deliveries_dispatch() == 5
    made = Delivery.objects.filter(event__in=fired)
    assert sorted(published.deliveries) == sorted(str(pk) for pk in made.values_list("id", flat=True))
    assert not made.filter(queued_at__isnull=True).exists()

    fire(django_capture_on_commit_callbacks, tenancy.workspace)  # the dispatch cleared the flag
    assert published.dispatches == 2


@pytest.mark.django_db
def test_a_delivery_committed_after_a_dispatchs_query_gets_a_dispatch_of_its_own(
    tenancy, published, monkeypatch, django_capture_on_commit_callbacks
):
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)])
    fire(django_capture_on_commit_callbacks, tenancy.workspace)
    query = dispatch._due_deliveries_mark_queued
    late = []

    def query_then_an_event_commits(**kwargs):
        found = query(**kwargs)
        if not late:
            late.append(fire(django_capture_on_commit_callbacks, tenancy.workspace))
        return found

    monkeypatch.setattr(dispatch, "_due_deliveries_mark_queued", query_then_an_event_commits)
    assert deliveries_dispatch() == 1
    # Had the dispatch cleared the flag after its query, this event would have found it set.
    assert published.dispatches == 2

    monkeypatch.setattr(dispatch, "_due_deliveries_mark_queued", query)
    assert deliveries_dispatch() == 1
    assert published.deliveries[-1] == str(Delivery.objects.get(event=late[0]).id)


@pytest.mark.django_db
def test_a_dispatch_queues_only_due_webhooks_nobody_has_queued(
    tenancy, published, django_capture_on_commit_callbacks
):
    rule = make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)])
    channel, now = rule.channels.get(), timezone.now()

    def delivery(**fields):
        return Delivery.objects.create(rule=rule, channel=channel, event=events.emit("agent.error"),
                                       channel_type="webhook", **{"next_attempt_at": now, **fields})

    due = delivery()
    delivery(next_attempt_at=now + timedelta(minutes=1))  # a retry's time has not come
    delivery(queued_at=now)  # its message is out already
    delivery(status=DeliveryStatus.SUCCEEDED)

    assert deliveries_dispatch() == 1
    assert published.deliveries == [str(due.id)]
    assert deliveries_dispatch() == 0


@pytest.mark.django_db
def test_an_email_is_sent_inline_and_never_dispatched(tenancy, published, smtp_server,
                                                      django_capture_on_commit_callbacks):
    make_rule(workspace=tenancy.workspace, channels=[{"type": "email", "to": ["ops@example.com"]}])

    fire(django_capture_on_commit_callbacks, tenancy.workspace)

    assert published.dispatches == 0
    assert deliveries_dispatch() == 0
    assert Delivery.objects.get().status == DeliveryStatus.SUCCEEDED


def test_a_dispatch_that_could_not_be_published_lets_the_next_event_try_again(published, monkeypatch):
    def broker_down(*args, **kwargs):
        raise ConnectionError("broker down")

    with monkeypatch.context() as patched:
        patched.setattr(tasks.dispatch_deliveries, "apply_async", broker_down)
        with pytest.raises(ConnectionError):
            dispatch_request()

    dispatch_request()
    dispatch_request()  # the flag is set again: nothing more to publish
    assert published.dispatches == 1


def test_dispatches_running_at_once_queue_each_delivery_exactly_once(tenancy, published, monkeypatch,
                                                                     transactional_db):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite runs one writer at a time; the race is PostgreSQL's")
    rule = make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)])
    channel, now = rule.channels.get(), timezone.now()
    fired = Event.objects.bulk_create(Event(kind="agent.error", occurred_at=now) for _ in range(300))
    Delivery.objects.bulk_create(
        Delivery(rule=rule, channel=channel, event=event, channel_type="webhook", next_attempt_at=now)
        for event in fired
    )
    monkeypatch.setattr(dispatch, "DISPATCH_BATCH", 7)  # many small transactions, so the three interleave

    run_in_threads(deliveries_dispatch, deliveries_dispatch, deliveries_dispatch)

    assert len(published.deliveries) == 300
    assert set(published.deliveries) == {str(pk) for pk in Delivery.objects.values_list("id", flat=True)}
