"""The whole pipeline with a real Celery worker on Redis: emit, commit, queue, send, retry."""

from datetime import timedelta
from functools import partial

import pytest
from django.db import connection, transaction
from django.utils import timezone

from alerts.models import Delivery, DeliveryStatus
from alerts.services import deliveries_sweep, delivery_attempt
from fleet import events
from tests.factories.alerts import fan_out, make_rule, webhook
from tests.support import client_for, run_in_threads

pytestmark = pytest.mark.worker


def test_an_emitted_event_is_delivered_by_the_worker_after_commit(tenancy, http_receiver, celery_worker_live):
    make_rule(workspace=tenancy.workspace, channels=[webhook(http_receiver.url_for("/hook"))], pattern="agent.*")

    with transaction.atomic():
        event = events.emit("agent.error", workspace_ids=[tenancy.workspace.id], message="down")

    (request,) = http_receiver.wait_for(1, timeout=15)
    assert request.json()["id"] == str(event.id)
    celery_worker_live.wait_until(lambda: Delivery.objects.get(event=event).status == DeliveryStatus.SUCCEEDED)


def test_a_burst_of_events_is_delivered_in_full_from_few_dispatches(tenancy, http_receiver, celery_worker_live):
    make_rule(workspace=tenancy.workspace, channels=[webhook(http_receiver.url_for("/hook"))], pattern="agent.*")

    fired = [events.emit("agent.error", workspace_ids=[tenancy.workspace.id], message=str(n)) for n in range(25)]

    received = http_receiver.wait_for(25, timeout=30)
    assert sorted(r.json()["id"] for r in received) == sorted(str(e.id) for e in fired)
    celery_worker_live.wait_until(
        lambda: set(Delivery.objects.values_list("status", flat=True)) == {DeliveryStatus.SUCCEEDED}
    )
    assert len(http_receiver.requests) == 25  # each sent once


def test_the_worker_retries_a_failed_attempt_on_schedule(tenancy, http_receiver, celery_worker_live):
    http_receiver.respond_with(500, times=1)
    make_rule(workspace=tenancy.workspace, channels=[webhook(http_receiver.url_for("/hook"))], pattern="*")

    event = events.emit("agent.warning", workspace_ids=[tenancy.workspace.id])

    first, second = http_receiver.wait_for(2, timeout=30)  # the second comes 10 s after the first
    assert first.header("webhook-id") == second.header("webhook-id")
    celery_worker_live.wait_until(lambda: Delivery.objects.get(event=event).status == DeliveryStatus.SUCCEEDED)
    assert Delivery.objects.get(event=event).attempts == 2


def test_the_test_route_answers_once_queued_and_the_worker_delivers(tenancy, http_receiver, celery_worker_live):
    rule = make_rule(workspace=tenancy.workspace, channels=[webhook(http_receiver.url_for("/hook"))])

    response = client_for(tenancy.admin).post(f"/api/workspaces/{tenancy.workspace.id}/alert-rules/{rule.id}/test")

    assert response.json() == {"success": True}
    (request,) = http_receiver.wait_for(1, timeout=15)
    assert request.json()["test"] is True and request.json()["type"] == "agent.test"
    celery_worker_live.wait_until(lambda: Delivery.objects.get(rule=rule).status == DeliveryStatus.SUCCEEDED)
    rule.refresh_from_db()
    assert rule.last_fired_at is not None


def test_two_workers_racing_for_one_delivery_send_it_once(tenancy, http_receiver, transactional_db):
    http_receiver.respond_with(200, delay=0.5)
    make_rule(workspace=tenancy.workspace, channels=[webhook(http_receiver.url_for("/hook"))])
    events.emit("agent.error", workspace_ids=[tenancy.workspace.id])
    (delivery,) = fan_out()  # what the dispatch does (no worker runs here)

    results = run_in_threads(*[partial(delivery_attempt, delivery_id=delivery.id)] * 4, timeout=20)

    assert len(http_receiver.requests) == 1
    assert sum(result is not None for result in results) == 1
    assert Delivery.objects.get(pk=delivery.id).attempts == 1


def test_the_sweep_requeues_a_delivery_whose_task_was_lost(tenancy, http_receiver, celery_worker_live):
    rule = make_rule(workspace=tenancy.workspace, channels=[webhook(http_receiver.url_for("/hook"))])
    event = events.emit("agent.error")  # no workspace: nothing fans out by itself
    overdue = timezone.now() - timedelta(minutes=5)
    lost = Delivery.objects.create(rule=rule, channel=rule.channels.get(), event=event, channel_type="webhook",
                                   next_attempt_at=overdue)
    dead_worker = Delivery.objects.create(rule=rule, channel=rule.channels.get(), event=events.emit("agent.warning"),
                                          channel_type="webhook", status=DeliveryStatus.SENDING, attempts=1,
                                          next_attempt_at=overdue, lease_expires_at=overdue)

    assert deliveries_sweep() == 2

    http_receiver.wait_for(2, timeout=15)
    for delivery in (lost, dead_worker):
        celery_worker_live.wait_until(
            lambda d=delivery: Delivery.objects.get(pk=d.pk).status == DeliveryStatus.SUCCEEDED
        )
    assert Delivery.objects.get(pk=dead_worker.pk).attempts == 2


def test_the_sweep_leaves_deliveries_that_are_not_yet_due_or_still_leased(tenancy, transactional_db):
    rule = make_rule(workspace=tenancy.workspace, channels=[webhook("http://127.0.0.1:9/hook")])
    now = timezone.now()
    Delivery.objects.create(rule=rule, channel=rule.channels.get(), event=events.emit("a.b"), channel_type="webhook",
                            next_attempt_at=now + timedelta(minutes=5))
    Delivery.objects.create(rule=rule, channel=rule.channels.get(), event=events.emit("a.c"), channel_type="webhook",
                            status=DeliveryStatus.SENDING, next_attempt_at=now,
                            lease_expires_at=now + timedelta(minutes=1))

    assert deliveries_sweep() == 0


def test_an_event_for_several_channels_is_delivered_to_each(tenancy, make_http_receiver, celery_worker_live):
    first, second = make_http_receiver(), make_http_receiver()
    make_rule(workspace=tenancy.workspace, pattern="agent.error",
              channels=[webhook(first.url_for("/a")), webhook(second.url_for("/b"))])
    make_rule(workspace=tenancy.workspace, pattern="*", channels=[webhook(first.url_for("/c"))])

    event = events.emit("agent.error", workspace_ids=[tenancy.workspace.id])

    assert sorted(r.path for r in first.wait_for(2, timeout=15)) == ["/a", "/c"]
    assert [r.path for r in second.wait_for(1, timeout=15)] == ["/b"]
    celery_worker_live.wait_until(
        lambda: set(Delivery.objects.filter(event=event).values_list("status", flat=True)) == {"succeeded"}
    )


def test_a_rule_deleted_while_its_delivery_is_being_sent_ends_quietly(tenancy, http_receiver, transactional_db):
    from alerts.models import AlertRule
    from tests.infra.http import Reply

    rule = make_rule(workspace=tenancy.workspace, channels=[webhook(http_receiver.url_for("/hook"))])

    def delete_rule_then_answer(request):
        AlertRule.objects.filter(pk=rule.pk).delete()  # from the receiver's thread, mid-request
        connection.close()
        return Reply(200)

    http_receiver.route("/hook", delete_rule_then_answer)
    event = events.emit("agent.error", workspace_ids=[tenancy.workspace.id])
    fan_out()  # what the dispatch does (no worker runs here)

    assert delivery_attempt(delivery_id=Delivery.objects.get(event=event).id) is None
    assert len(http_receiver.requests) == 1
    assert not Delivery.objects.filter(event=event).exists()
