"""Dispatch: one broker message per burst of events, the burst fanned out and queued, and no
event left behind or fanned out twice."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from alerts import tasks
from alerts.models import Delivery, DeliveryStatus
from alerts.services import (
    FAN_OUT_GRACE,
    deliveries_attempt,
    deliveries_dispatch,
    deliveries_sweep,
    dispatch_request,
    fanout,
    fanout_insert,
)
from alerts.services.enqueue import DELIVER_GROUP
from fleet import events
from fleet.models import Event
from tests.factories.alerts import fan_out, make_rule, webhook
from tests.support import run_in_threads

HOOK = "http://127.0.0.1:9/hook"


def fire(capture, workspace, kind="agent.error", **kwargs):
    with capture(execute=True):
        return events.emit(kind, workspace_ids=[workspace.id], **kwargs)


def waiting() -> list:
    return list(Event.objects.filter(fanned_out_at__isnull=True).values_list("pk", flat=True))


@pytest.mark.django_db
def test_a_burst_of_events_publishes_one_dispatch_which_fans_out_and_queues_every_delivery(
    tenancy, published, django_capture_on_commit_callbacks
):
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)])
    fired = [fire(django_capture_on_commit_callbacks, tenancy.workspace) for _ in range(5)]

    assert published.dispatches == 1
    assert not Delivery.objects.exists()  # the emitters only stored their events
    assert deliveries_dispatch() == 5
    made = Delivery.objects.filter(event__in=fired)
    assert sorted(published.deliveries) == sorted(str(pk) for pk in made.values_list("id", flat=True))
    assert not made.filter(queued_at__isnull=True).exists()

    fire(django_capture_on_commit_callbacks, tenancy.workspace)  # the dispatch cleared the flag
    assert published.dispatches == 2


@pytest.mark.django_db
def test_an_event_committed_after_a_dispatchs_claim_gets_a_dispatch_of_its_own(
    tenancy, published, monkeypatch, django_capture_on_commit_callbacks
):
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)])
    fire(django_capture_on_commit_callbacks, tenancy.workspace)
    fan_out = fanout.events_fan_out
    late = []

    def claim_then_an_event_commits(**kwargs):
        found = fan_out(**kwargs)
        if not late:
            late.append(fire(django_capture_on_commit_callbacks, tenancy.workspace))
        return found

    monkeypatch.setattr(fanout, "events_fan_out", claim_then_an_event_commits)
    assert deliveries_dispatch() == 1
    # Had the dispatch cleared the flag after its claim, this event would have found it set.
    assert published.dispatches == 2
    assert waiting() == [late[0].pk]

    monkeypatch.setattr(fanout, "events_fan_out", fan_out)
    assert deliveries_dispatch() == 1
    assert published.deliveries[-1] == str(Delivery.objects.get(event=late[0]).id)


@pytest.mark.django_db
def test_an_event_of_no_workspace_requests_no_dispatch_and_is_marked_by_the_next(
    tenancy, published, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        alone = events.emit("agent.error")
    assert published.dispatches == 0

    fire(django_capture_on_commit_callbacks, tenancy.workspace)
    deliveries_dispatch()

    assert published.dispatches == 1 and waiting() == []
    assert Event.objects.get(pk=alone.pk).fanned_out_at is not None


@pytest.mark.django_db
def test_a_dispatch_loops_over_batches_until_no_event_is_left(
    tenancy, published, monkeypatch, django_capture_on_commit_callbacks
):
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)])
    monkeypatch.setattr(fanout, "FAN_OUT_BATCH", 4)
    for _ in range(9):
        fire(django_capture_on_commit_callbacks, tenancy.workspace)

    assert deliveries_dispatch() == 9
    assert waiting() == [] and len(set(published.deliveries)) == 9


@pytest.mark.django_db
def test_an_email_is_queued_by_the_dispatch_like_a_webhook(tenancy, published, smtp_server,
                                                           django_capture_on_commit_callbacks):
    make_rule(workspace=tenancy.workspace, channels=[{"type": "email", "to": ["ops@example.com"]}])

    fire(django_capture_on_commit_callbacks, tenancy.workspace)

    assert published.dispatches == 1 and smtp_server.messages == []  # the emitter sends nothing itself
    assert deliveries_dispatch() == 1
    delivery = Delivery.objects.get()
    assert (delivery.channel_type, delivery.status) == ("email", DeliveryStatus.PENDING)
    assert published.deliveries == [str(delivery.id)]


@pytest.mark.django_db
def test_the_email_of_an_event_is_sent_by_the_worker_once_dispatched(
    tenancy, worker_in_process, smtp_server, django_capture_on_commit_callbacks
):
    make_rule(workspace=tenancy.workspace, channels=[{"type": "email", "to": ["ops@example.com"]}])

    fire(django_capture_on_commit_callbacks, tenancy.workspace)

    (mail,) = smtp_server.messages
    assert mail.rcpt_tos == ["ops@example.com"]
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


def test_dispatches_running_at_once_fan_out_each_event_exactly_once(tenancy, published, monkeypatch,
                                                                   transactional_db):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite runs one writer at a time; the race is PostgreSQL's (tests/alerts/sqlite_fanout.py)")
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], pattern="*")
    make_rule(workspace=tenancy.other_workspace, channels=[webhook(HOOK)], pattern="agent.*")
    now = timezone.now()
    Event.objects.bulk_create(
        Event(kind="agent.error", occurred_at=now, workspace_ids=[str(tenancy.workspace.id)]
              + ([str(tenancy.other_workspace.id)] if i % 2 else []))
        for i in range(300)
    )
    monkeypatch.setattr(fanout, "FAN_OUT_BATCH", 7)  # many small transactions, so the three interleave
    claims = []
    claim = fanout.events_claim

    def recorded_claim(**kwargs):
        claimed = claim(**kwargs)
        claims.append([event.id for event in claimed])
        return claimed

    monkeypatch.setattr(fanout, "events_claim", recorded_claim)

    counts = run_in_threads(deliveries_dispatch, deliveries_dispatch, deliveries_dispatch)

    claimed = [pk for batch in claims for pk in batch]
    assert len(claimed) == len(set(claimed)) == 300  # every event claimed, by one dispatch only
    assert sum(counts) == len(published.deliveries) == len(set(published.deliveries)) == 450
    assert set(published.deliveries) == {str(pk) for pk in Delivery.objects.values_list("id", flat=True)}
    assert waiting() == []


def test_the_sweep_fans_out_the_events_a_lost_dispatch_left_waiting(tenancy, published, transactional_db):
    make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)])
    now = timezone.now()
    stale = events.emit("agent.error", workspace_ids=[tenancy.workspace.id], occurred_at=now - timedelta(minutes=2))
    fresh = events.emit("agent.error", workspace_ids=[tenancy.workspace.id])
    assert published.dispatches == 1  # its message lost: nothing ran it

    assert deliveries_sweep() == 1

    assert published.deliveries == [str(Delivery.objects.get(event=stale).id)]
    assert waiting() == [fresh.pk]  # its dispatch may still come; later sweeps take it
    assert deliveries_sweep(now=timezone.now() + FAN_OUT_GRACE) == 1
    assert waiting() == []


@pytest.mark.django_db
def test_a_test_events_rule_id_is_matched_against_its_own_workspaces_only(tenancy, published):
    foreign = make_rule(workspace=tenancy.other_workspace, channels=[webhook(HOOK)])
    # A test event of this workspace naming a rule of another: nothing, as before matching moved.
    event = Event.objects.create(kind="agent.test", workspace_ids=[str(tenancy.workspace.id)], test=True,
                                 data={fanout_insert.TEST_RULE_KEY: str(foreign.id)}, occurred_at=timezone.now())

    assert deliveries_dispatch() == 0
    assert not Delivery.objects.filter(event=event).exists()


@pytest.mark.django_db
def test_a_dispatch_publishes_one_message_per_channel_and_group_of_deliveries(
    tenancy, broker_queue, django_capture_on_commit_callbacks
):
    crowded = make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], pattern="*", name="crowded")
    quiet = make_rule(workspace=tenancy.workspace, channels=[webhook("http://127.0.0.1:10/quiet")],
                      pattern="agent.error", name="quiet")
    for _ in range(DELIVER_GROUP * 2 + 1):
        fire(django_capture_on_commit_callbacks, tenancy.workspace, kind="agent.started")  # the crowded one only
    fire(django_capture_on_commit_callbacks, tenancy.workspace, kind="agent.error")  # both

    assert deliveries_dispatch() == DELIVER_GROUP * 2 + 3

    messages = broker_queue.read()
    assert [task for task, _ in messages if task == "alerts.dispatch_deliveries"] == ["alerts.dispatch_deliveries"]
    sent = sorted((task, len(arg) if isinstance(arg, list) else 1) for task, arg in messages
                  if task.startswith("alerts.deliver"))
    assert sent == [("alerts.deliver", 1), ("alerts.deliver_group", 2), ("alerts.deliver_group", DELIVER_GROUP),
                    ("alerts.deliver_group", DELIVER_GROUP)]
    by_rule = {rule.pk: {str(pk) for pk in Delivery.objects.filter(rule=rule).values_list("id", flat=True)}
               for rule in (crowded, quiet)}
    groups = [set(arg) if isinstance(arg, list) else {arg} for task, arg in messages
              if task != "alerts.dispatch_deliveries"]
    assert all(group <= by_rule[crowded.pk] or group <= by_rule[quiet.pk] for group in groups)  # one channel each
    assert set().union(*groups) == by_rule[crowded.pk] | by_rule[quiet.pk]


@pytest.mark.django_db
def test_a_group_attempts_each_delivery_even_after_one_fails_unexpectedly(tenancy, http_receiver, caplog,
                                                                         django_capture_on_commit_callbacks):
    make_rule(workspace=tenancy.workspace, channels=[webhook(http_receiver.url_for("/hook"))])
    for _ in range(2):
        fire(django_capture_on_commit_callbacks, tenancy.workspace)
    first, second = (str(d.id) for d in fan_out())

    deliveries_attempt(delivery_ids=[first, "not-a-delivery-id", second])

    assert len(http_receiver.wait_for(2)) == 2
    assert set(Delivery.objects.values_list("status", flat=True)) == {DeliveryStatus.SUCCEEDED}
    assert "not-a-delivery-id" in caplog.text
