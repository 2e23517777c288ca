"""Webhook deliveries against a real HTTP receiver on loopback; retries driven with the clock."""

import base64
import hashlib
import hmac
from datetime import timedelta

import pytest
from django.utils import timezone

from agents.services.lifecycle import agent_delete
from alerts.models import Delivery, DeliveryStatus
from alerts.services import MAX_ATTEMPTS, RETRY_DELAYS, delivery_attempt, delivery_claim, delivery_resend
from fleet import events
from fleet.models import Event
from tests.factories.agents import AgentFactory, WorkspaceAgentFactory
from tests.factories.alerts import fan_out, make_rule, webhook
from tests.support import frozen_clock

pytestmark = pytest.mark.django_db

KEY = b"k" * 32
SECRET = "whsec_" + base64.b64encode(KEY).decode()


def verify(request, key: bytes) -> bool:
    """The receiver's side of Standard Webhooks, written from the spec, not from alerts.signing."""
    msg_id, ts = request.header("webhook-id"), request.header("webhook-timestamp")
    expected = base64.b64encode(hmac.new(key, f"{msg_id}.{ts}.".encode() + request.body, hashlib.sha256).digest())
    scheme, _, signature = request.header("webhook-signature").partition(",")
    return scheme == "v1" and hmac.compare_digest(signature.encode(), expected)


def fire(django_capture_on_commit_callbacks, kind="agent.error", **kwargs):
    """Emit an event, run what happens after its commit, and the dispatch's fan-out."""
    with django_capture_on_commit_callbacks(execute=True):
        event = events.emit(kind, **kwargs)
    fan_out()
    return event


@pytest.fixture
def rule(tenancy, http_receiver):
    return make_rule(
        workspace=tenancy.workspace,
        channels=[webhook(http_receiver.url_for("/hook"), headers={"X-Team": "ops"}, secret=SECRET)],
        pattern="agent.*",
        name="Agent trouble",
    )


def test_a_matching_event_is_posted_with_the_design_body_and_a_valid_signature(
    tenancy, rule, http_receiver, django_capture_on_commit_callbacks
):
    event = fire(django_capture_on_commit_callbacks, workspace_ids=[tenancy.workspace.id], message="Container exited",
                 data={"exitCode": 137})
    delivery = Delivery.objects.get(event=event)

    delivery_attempt(delivery_id=delivery.id)

    (request,) = http_receiver.wait_for(1)
    assert request.method == "POST" and request.path == "/hook"
    assert request.header("content-type") == "application/json"
    assert request.header("x-team") == "ops"
    assert request.header("webhook-id") == str(delivery.id)
    assert abs(int(request.header("webhook-timestamp")) - timezone.now().timestamp()) < 30
    assert verify(request, KEY)
    assert request.json() == {
        "id": str(event.id),
        "type": "agent.error",
        "occurredAt": event.occurred_at.isoformat().replace("+00:00", "Z"),
        "workspace": {"id": str(tenancy.workspace.id), "name": tenancy.workspace.name},
        "agent": None,
        "message": "Container exited",
        "data": {"exitCode": 137},
        "rule": {"id": str(rule.id), "name": "Agent trouble"},
        "test": False,
    }
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.SUCCEEDED
    (attempt,) = delivery.attempt_log.all()
    assert (attempt.number, attempt.status_code, attempt.succeeded, attempt.error) == (1, 200, True, "")
    rule.refresh_from_db()
    assert rule.last_fired_at is not None and rule.last_error is None


def test_a_tampered_body_does_not_verify(tenancy, rule, http_receiver, django_capture_on_commit_callbacks):
    event = fire(django_capture_on_commit_callbacks, workspace_ids=[tenancy.workspace.id])
    delivery_attempt(delivery_id=Delivery.objects.get(event=event).id)
    (request,) = http_receiver.wait_for(1)

    forged = type(request)(request.method, request.path, request.query, request.headers, request.body + b" ")

    assert verify(request, KEY) and not verify(forged, KEY)


def test_the_agent_is_described_as_it_is_when_the_agent_exists(tenancy, rule, http_receiver,
                                                               django_capture_on_commit_callbacks):
    agent = AgentFactory(name="scout", status="error")
    event = fire(django_capture_on_commit_callbacks, workspace_ids=[tenancy.workspace.id], agent=agent)

    delivery_attempt(delivery_id=Delivery.objects.get(event=event).id)

    assert http_receiver.wait_for(1)[0].json()["agent"] == {"id": str(agent.id), "name": "scout", "status": "error"}


def test_an_agent_deleted_through_its_service_is_named_in_the_delivery(
    tenancy, rule, http_receiver, django_capture_on_commit_callbacks
):
    agent = WorkspaceAgentFactory(workspace=tenancy.workspace, agent__name="doomed", agent__status="stopped",
                                  agent__container_id="").agent
    with django_capture_on_commit_callbacks(execute=True):
        agent_delete(agent=agent)
    fan_out()
    event = Event.objects.get(kind="agent.deleted")

    delivery_attempt(delivery_id=Delivery.objects.get(event=event).id)

    assert http_receiver.wait_for(1)[0].json()["agent"] == {"id": str(agent.id), "name": "doomed", "status": "stopped"}


def retry_until_done(delivery, clock):
    """Attempt, and after each failure move the clock to the next attempt, until the delivery ends."""
    while True:
        delivery_attempt(delivery_id=delivery.id)
        delivery.refresh_from_db()
        if delivery.status != DeliveryStatus.PENDING:
            return delivery
        clock.move_to(delivery.next_attempt_at + timedelta(milliseconds=1))


def test_500_twice_then_200_makes_three_attempts_and_one_success(
    tenancy, rule, http_receiver, django_capture_on_commit_callbacks
):
    http_receiver.respond_with(500, times=2)
    event = fire(django_capture_on_commit_callbacks, workspace_ids=[tenancy.workspace.id])
    delivery = Delivery.objects.get(event=event)

    with frozen_clock(tick=True) as clock:
        delivery = retry_until_done(delivery, clock)

    assert len(http_receiver.requests) == 3
    assert len({r.header("webhook-id") for r in http_receiver.requests}) == 1  # one message, three tries
    assert len({r.body for r in http_receiver.requests}) == 1
    assert delivery.status == DeliveryStatus.SUCCEEDED
    attempts = list(delivery.attempt_log.all())
    assert [(a.number, a.status_code, a.succeeded) for a in attempts] == [
        (1, 500, False), (2, 500, False), (3, 200, True),
    ]
    assert attempts[0].error.startswith("HTTP 500")
    assert attempts[1].started_at - attempts[0].started_at >= RETRY_DELAYS[0]
    assert attempts[2].started_at - attempts[1].started_at >= RETRY_DELAYS[1]
    rule.refresh_from_db()
    assert rule.last_error is None  # the success cleared the failures' error


def test_a_retry_is_not_sent_before_it_is_due(tenancy, rule, http_receiver, django_capture_on_commit_callbacks):
    http_receiver.respond_with(500)
    event = fire(django_capture_on_commit_callbacks, workspace_ids=[tenancy.workspace.id])
    delivery = Delivery.objects.get(event=event)
    delivery_attempt(delivery_id=delivery.id)

    assert delivery_attempt(delivery_id=delivery.id) is None
    assert len(http_receiver.requests) == 1
    rule.refresh_from_db()
    assert rule.last_error.endswith("HTTP 500 Internal Server Error")
    assert http_receiver.url in rule.last_error


def test_410_stops_at_once(tenancy, rule, http_receiver, django_capture_on_commit_callbacks):
    http_receiver.respond_with(410)
    event = fire(django_capture_on_commit_callbacks, workspace_ids=[tenancy.workspace.id])

    delivery = delivery_attempt(delivery_id=Delivery.objects.get(event=event).id)

    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.attempts == 1 and len(http_receiver.requests) == 1
    rule.refresh_from_db()
    assert "HTTP 410" in rule.last_error


@pytest.mark.parametrize("status, retried", [(400, False), (401, False), (404, False), (422, False),
                                             (408, True), (429, True), (502, True), (503, True)])
def test_client_errors_stop_except_408_and_429(tenancy, rule, http_receiver, django_capture_on_commit_callbacks,
                                               status, retried):
    http_receiver.respond_with(status)
    event = fire(django_capture_on_commit_callbacks, workspace_ids=[tenancy.workspace.id])

    delivery = delivery_attempt(delivery_id=Delivery.objects.get(event=event).id)

    assert delivery.status == (DeliveryStatus.PENDING if retried else DeliveryStatus.FAILED)


def test_it_gives_up_after_six_attempts(tenancy, rule, http_receiver, django_capture_on_commit_callbacks):
    http_receiver.respond_with(503)
    event = fire(django_capture_on_commit_callbacks, workspace_ids=[tenancy.workspace.id])
    delivery = Delivery.objects.get(event=event)
    start = timezone.now()

    with frozen_clock(start, tick=True) as clock:
        delivery = retry_until_done(delivery, clock)

    assert MAX_ATTEMPTS == 6
    assert delivery.status == DeliveryStatus.FAILED and delivery.attempts == 6
    assert len(http_receiver.requests) == 6
    started = [a.started_at for a in delivery.attempt_log.all()]
    gaps = [b - a for a, b in zip(started, started[1:], strict=False)]
    assert [round(g.total_seconds()) for g in gaps] == [10, 60, 300, 1800, 7200]


def test_a_receiver_that_is_down_then_back_still_gets_the_alert(
    tenancy, rule, http_receiver, django_capture_on_commit_callbacks
):
    http_receiver.stop()
    event = fire(django_capture_on_commit_callbacks, workspace_ids=[tenancy.workspace.id])
    delivery = Delivery.objects.get(event=event)

    with frozen_clock(tick=True) as clock:
        delivery = delivery_attempt(delivery_id=delivery.id)
        assert delivery.status == DeliveryStatus.PENDING
        assert delivery.last_error.startswith("Request failed: ConnectionError")
        http_receiver.start()
        clock.move_to(delivery.next_attempt_at + timedelta(milliseconds=1))
        delivery = delivery_attempt(delivery_id=delivery.id)

    assert delivery.status == DeliveryStatus.SUCCEEDED
    assert len(http_receiver.wait_for(1)) == 1
    assert [a.status_code for a in delivery.attempt_log.all()] == [None, 200]


def test_a_slow_receiver_times_out_and_is_retried(tenancy, rule, http_receiver, settings,
                                                  django_capture_on_commit_callbacks):
    settings.OUTBOUND_TIMEOUT_SECONDS = 0.5
    http_receiver.respond_with(200, delay=2)
    event = fire(django_capture_on_commit_callbacks, workspace_ids=[tenancy.workspace.id])

    delivery = delivery_attempt(delivery_id=Delivery.objects.get(event=event).id)

    assert delivery.status == DeliveryStatus.PENDING
    assert "Timeout" in delivery.last_error


def test_a_target_no_longer_allowed_at_connect_time_is_refused_for_good(
    tenancy, rule, http_receiver, settings, django_capture_on_commit_callbacks
):
    event = fire(django_capture_on_commit_callbacks, workspace_ids=[tenancy.workspace.id])
    settings.OUTBOUND_ALLOWED_HOSTS = []  # the loopback receiver is now an unsafe target

    delivery = delivery_attempt(delivery_id=Delivery.objects.get(event=event).id)

    assert delivery.status == DeliveryStatus.FAILED
    assert "loopback" in delivery.last_error
    assert http_receiver.requests == []


def test_a_redirect_to_an_unsafe_target_is_not_followed(tenancy, http_receiver, make_http_receiver,
                                                        django_capture_on_commit_callbacks):
    http_receiver.respond_with(307, headers={"Location": "http://169.254.169.254/latest/meta-data"})
    make_rule(workspace=tenancy.workspace, channels=[webhook(http_receiver.url_for("/hook"))])
    event = fire(django_capture_on_commit_callbacks, workspace_ids=[tenancy.workspace.id])

    delivery = delivery_attempt(delivery_id=Delivery.objects.get(event=event).id)

    assert delivery.status == DeliveryStatus.FAILED
    assert "metadata" in delivery.last_error


def test_without_a_secret_the_delivery_is_unsigned(tenancy, http_receiver, django_capture_on_commit_callbacks):
    make_rule(workspace=tenancy.workspace, channels=[webhook(http_receiver.url_for("/plain"))])
    event = fire(django_capture_on_commit_callbacks, workspace_ids=[tenancy.workspace.id])

    delivery_attempt(delivery_id=Delivery.objects.get(event=event).id)

    (request,) = http_receiver.wait_for(1)
    assert request.header("webhook-signature") is None
    assert request.header("webhook-id") and request.header("webhook-timestamp")


def test_only_one_of_two_racing_claims_wins(tenancy, rule, django_capture_on_commit_callbacks):
    event = fire(django_capture_on_commit_callbacks, workspace_ids=[tenancy.workspace.id])
    delivery = Delivery.objects.get(event=event)
    now = timezone.now()

    assert delivery_claim(delivery_id=delivery.id, now=now) is True
    assert delivery_claim(delivery_id=delivery.id, now=now) is False


def test_a_claim_abandoned_by_a_dead_worker_is_taken_over_after_its_lease(
    tenancy, rule, http_receiver, django_capture_on_commit_callbacks
):
    event = fire(django_capture_on_commit_callbacks, workspace_ids=[tenancy.workspace.id])
    delivery = Delivery.objects.get(event=event)
    assert delivery_claim(delivery_id=delivery.id, now=timezone.now())  # the worker then died

    assert delivery_attempt(delivery_id=delivery.id) is None  # still leased
    with frozen_clock(timezone.now() + timedelta(minutes=3), tick=True):
        delivery = delivery_attempt(delivery_id=delivery.id)

    assert delivery.status == DeliveryStatus.SUCCEEDED
    assert len(http_receiver.requests) == 1


def test_a_failed_delivery_can_be_resent(tenancy, rule, http_receiver, django_capture_on_commit_callbacks):
    http_receiver.respond_with(410, times=1)
    event = fire(django_capture_on_commit_callbacks, workspace_ids=[tenancy.workspace.id])
    delivery = delivery_attempt(delivery_id=Delivery.objects.get(event=event).id)
    assert delivery.status == DeliveryStatus.FAILED

    delivery = delivery_resend(delivery=delivery)
    assert delivery.status == DeliveryStatus.PENDING and delivery.attempts == 0
    delivery = delivery_attempt(delivery_id=delivery.id)

    assert delivery.status == DeliveryStatus.SUCCEEDED
    assert [a.status_code for a in delivery.attempt_log.all()] == [410, 200]


def test_editing_a_rule_keeps_the_pending_retries_of_unchanged_channels(
    tenancy, rule, http_receiver, make_http_receiver, django_capture_on_commit_callbacks
):
    from alerts.channel_config import parse_channels
    from alerts.services import alert_rule_update

    http_receiver.respond_with(500, times=1)
    removed = make_http_receiver()
    alert_rule_update(rule=rule, channels=parse_channels([
        webhook(http_receiver.url_for("/hook"), headers={"X-Team": "ops"}, secret=SECRET),
        webhook(removed.url_for("/old")),
    ]))
    event = fire(django_capture_on_commit_callbacks, workspace_ids=[tenancy.workspace.id])
    kept, dropped = (Delivery.objects.get(event=event, channel__config__url=url)
                     for url in (http_receiver.url_for("/hook"), removed.url_for("/old")))
    delivery_attempt(delivery_id=kept.id)  # a 500: a retry is pending

    alert_rule_update(rule=rule, name="Renamed", channels=parse_channels([
        webhook(http_receiver.url_for("/hook"), headers={"X-Team": "ops"}, secret="[REDACTED]"),
    ]))
    rule.refresh_from_db()
    error_before = rule.last_error

    with frozen_clock(timezone.now() + timedelta(minutes=1), tick=True):
        kept = delivery_attempt(delivery_id=kept.id)
        dropped = delivery_attempt(delivery_id=dropped.id)

    assert kept.status == DeliveryStatus.SUCCEEDED
    assert verify(http_receiver.requests[-1], KEY)  # still signed with the kept secret
    assert dropped.status == DeliveryStatus.FAILED
    assert dropped.last_error == "The channel was removed from the rule."
    assert removed.requests == []
    rule.refresh_from_db()
    assert error_before and rule.last_error is None
