"""The admin console: rules with channels, deliveries with attempts, and the resend action."""

import pytest
from django.test import Client

from alerts.models import Delivery, DeliveryStatus
from alerts.services import delivery_attempt
from fleet import events
from tests.factories.alerts import fan_out, make_rule, webhook

pytestmark = pytest.mark.django_db

SECRET = "a-signing-secret-long-enough"


@pytest.fixture
def failed_delivery(tenancy, http_receiver, django_capture_on_commit_callbacks):
    http_receiver.respond_with(410, times=1)
    make_rule(workspace=tenancy.workspace, channels=[webhook(http_receiver.url_for("/hook"), secret=SECRET)])
    with django_capture_on_commit_callbacks(execute=True):
        event = events.emit("agent.error", workspace_ids=[tenancy.workspace.id])
    fan_out()
    return delivery_attempt(delivery_id=Delivery.objects.get(event=event).id)


def test_rules_and_deliveries_are_listed_and_shown_without_the_secret(console, failed_delivery):
    pages = [
        "/admin/alerts/alertrule/",
        f"/admin/alerts/alertrule/{failed_delivery.rule_id}/change/",
        "/admin/alerts/delivery/",
        f"/admin/alerts/delivery/{failed_delivery.id}/change/",
    ]
    for page in pages:
        response = console.get(page)
        assert response.status_code == 200, page
        assert SECRET not in response.content.decode()
    assert "HTTP 410" in console.get(pages[3]).content.decode()  # the attempt is shown


def test_resend_queues_a_failed_delivery_again(console, failed_delivery, http_receiver,
                                               django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        response = console.post(
            "/admin/alerts/delivery/",
            {"action": "resend", "_selected_action": [str(failed_delivery.id)]},
            follow=True,
        )

    assert response.status_code == 200
    assert "Queued 1 failed" in response.content.decode()
    failed_delivery.refresh_from_db()
    assert failed_delivery.status == DeliveryStatus.PENDING and failed_delivery.attempts == 0
    assert delivery_attempt(delivery_id=failed_delivery.id).status == DeliveryStatus.SUCCEEDED


def test_resend_skips_deliveries_that_did_not_fail(console, tenancy, django_capture_on_commit_callbacks):
    make_rule(workspace=tenancy.workspace, channels=[webhook("http://127.0.0.1:9/hook")])
    with django_capture_on_commit_callbacks(execute=False):
        event = events.emit("agent.error", workspace_ids=[tenancy.workspace.id])
    fan_out()
    pending = Delivery.objects.get(event=event)  # queued by the dispatch, not yet attempted

    response = console.post(
        "/admin/alerts/delivery/", {"action": "resend", "_selected_action": [str(pending.id)]}, follow=True
    )

    assert "Skipped 1" in response.content.decode()
    assert Delivery.objects.get(pk=pending.pk).status == DeliveryStatus.PENDING


def test_a_platform_user_who_is_not_an_admin_cannot_open_the_console(tenancy):
    client = Client()
    client.force_login(tenancy.owner)
    response = client.get("/admin/alerts/delivery/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
