"""Email deliveries through Django's SMTP backend to a real SMTP server on loopback. The dispatch
and the worker's attempts run in this process (`worker_in_process`), right after the emitter's commit."""

import pytest
from django.utils import timezone

from alerts.models import Delivery, DeliveryStatus
from alerts.services import delivery_attempt
from fleet import events
from tests.factories.alerts import make_rule
from tests.support import client_for, frozen_clock

pytestmark = pytest.mark.django_db


def email_channel(to, **extra):
    return {"type": "email", "to": to, **extra}


def test_a_matching_event_is_emailed_to_every_recipient(tenancy, smtp_server, worker_in_process,
                                                        django_capture_on_commit_callbacks):
    rule = make_rule(
        workspace=tenancy.workspace,
        channels=[email_channel(["ops@example.com", "oncall@example.com"], subjectPrefix="[prod]")],
        pattern="agent.error",
        name="Errors by mail",
    )

    with django_capture_on_commit_callbacks(execute=True):
        event = events.emit("agent.error", workspace_ids=[tenancy.workspace.id], message="Container exited with 137",
                            data={"exitCode": 137})

    (mail,) = smtp_server.messages
    assert sorted(mail.rcpt_tos) == ["oncall@example.com", "ops@example.com"]
    assert mail.subject == f"[prod] [{tenancy.workspace.name}] agent.error: Container exited with 137"
    assert "Container exited with 137" in mail.text
    assert "Errors by mail" in mail.text and "exitCode: 137" in mail.text
    html = mail.email.get_body(preferencelist=("html",)).get_content()
    assert "<h2" in html and "Container exited with 137" in html
    delivery = Delivery.objects.get(event=event)
    assert delivery.status == DeliveryStatus.SUCCEEDED
    rule.refresh_from_db()
    assert rule.last_fired_at is not None and rule.last_error is None


def test_html_in_an_event_message_is_escaped_in_the_html_part(tenancy, smtp_server, worker_in_process,
                                                              django_capture_on_commit_callbacks):
    make_rule(workspace=tenancy.workspace, channels=[email_channel(["ops@example.com"])], pattern="*")

    with django_capture_on_commit_callbacks(execute=True):
        events.emit("agent.error", workspace_ids=[tenancy.workspace.id], message="<script>x</script>")

    (mail,) = smtp_server.wait_for(1)
    html = mail.email.get_body(preferencelist=("html",)).get_content()
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<script>x</script>" in mail.text  # plain text stays as written


def test_the_test_route_emails_a_test_alert_before_answering(tenancy, smtp_server,
                                                            django_capture_on_commit_callbacks):
    rule = make_rule(workspace=tenancy.workspace, channels=[email_channel(["ops@example.com"])], pattern="agent.*")

    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(tenancy.admin).post(
            f"/api/workspaces/{tenancy.workspace.id}/alert-rules/{rule.id}/test"
        )

    assert response.json() == {"success": True}
    (mail,) = smtp_server.messages
    assert mail.subject.startswith(f"[{tenancy.workspace.name}] agent.test") and mail.subject.endswith("(test)")
    assert "This is a test alert" in mail.text


def test_a_transient_smtp_failure_is_retried(tenancy, smtp_server, worker_in_process,
                                             django_capture_on_commit_callbacks):
    rule = make_rule(workspace=tenancy.workspace, channels=[email_channel(["ops@example.com"])], pattern="*")
    smtp_server.fail_next("451 4.3.0 Try again later")

    with django_capture_on_commit_callbacks(execute=True):
        event = events.emit("agent.error", workspace_ids=[tenancy.workspace.id])

    delivery = Delivery.objects.get(event=event)
    assert delivery.status == DeliveryStatus.PENDING
    assert delivery.last_error.startswith("SMTP 451")
    rule.refresh_from_db()
    assert "ops@example.com" in rule.last_error

    with frozen_clock(delivery.next_attempt_at, tick=True):
        delivery = delivery_attempt(delivery_id=delivery.id)

    assert delivery.status == DeliveryStatus.SUCCEEDED
    assert len(smtp_server.messages) == 1
    rule.refresh_from_db()
    assert rule.last_error is None


def test_a_permanent_smtp_failure_stops(tenancy, smtp_server, worker_in_process, django_capture_on_commit_callbacks):
    make_rule(workspace=tenancy.workspace, channels=[email_channel(["ops@example.com"])], pattern="*")
    smtp_server.fail_next("550 5.1.1 No such mailbox")

    with django_capture_on_commit_callbacks(execute=True):
        event = events.emit("agent.error", workspace_ids=[tenancy.workspace.id])

    delivery = Delivery.objects.get(event=event)
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.attempt_log.get().error.startswith("SMTP 550")


def test_an_unreachable_smtp_server_is_retried(tenancy, smtp_server, worker_in_process,
                                               django_capture_on_commit_callbacks):
    make_rule(workspace=tenancy.workspace, channels=[email_channel(["ops@example.com"])], pattern="*")
    smtp_server.stop()

    with django_capture_on_commit_callbacks(execute=True):
        event = events.emit("agent.error", workspace_ids=[tenancy.workspace.id])

    delivery = Delivery.objects.get(event=event)
    assert delivery.status == DeliveryStatus.PENDING
    assert delivery.next_attempt_at > timezone.now()
