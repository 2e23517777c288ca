"""The admin console: rules with channels, deliveries with attempts, and the resend action."""

import json

import pytest
from django.test import Client

from alerts.models import AlertRule, Delivery, DeliveryStatus
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


HOOK_SECRET = "console-signing-secret-7f3c2a"


def _rule_form(tenancy, channels, **fields) -> dict:
    return {"name": "Agent errors", "workspace": tenancy.workspace.pk, "event_pattern": "agent.error",
            "enabled": "on", "channels": json.dumps(channels), **fields}


def test_an_operator_adds_a_rule_as_the_api_does_and_its_secret_is_never_shown(console, tenancy, platform_admin):
    channels = [webhook("http://127.0.0.1:9/hook", secret=HOOK_SECRET), {"type": "email", "to": ["ops@example.com"]}]

    added = console.post("/admin/alerts/alertrule/add/", _rule_form(tenancy, channels))

    assert added.status_code == 302, added.content.decode()[-3000:]
    rule = AlertRule.objects.get(name="Agent errors")
    assert (rule.workspace_id, rule.event_pattern, rule.created_by_id) == (tenancy.workspace.pk, "agent.error",
                                                                           platform_admin.pk)
    hook, mail = rule.channels.order_by("position")
    assert (hook.secret, mail.config["to"]) == (HOOK_SECRET, ["ops@example.com"])
    page = console.get(f"/admin/alerts/alertrule/{rule.pk}/change/").content.decode()
    assert HOOK_SECRET not in page and "[REDACTED]" in page


def test_a_change_that_sends_the_redacted_secret_back_keeps_it(console, tenancy):
    rule = make_rule(workspace=tenancy.workspace, channels=[webhook("http://127.0.0.1:9/hook", secret=HOOK_SECRET)])
    kept = [webhook("http://127.0.0.1:9/hook", secret="[REDACTED]")]

    changed = console.post(f"/admin/alerts/alertrule/{rule.pk}/change/",
                           _rule_form(tenancy, kept, name="Renamed", event_pattern="agent.*"))

    assert changed.status_code == 302, changed.content.decode()[-3000:]
    rule.refresh_from_db()
    assert (rule.name, rule.event_pattern, rule.channels.get().secret) == ("Renamed", "agent.*", HOOK_SECRET)


def test_the_routes_checks_refuse_a_rule_on_its_fields(console, tenancy):
    refusals = {
        "bad_pattern": _rule_form(tenancy, [webhook("http://127.0.0.1:9/hook")], event_pattern="agent..x"),
        "bad_url": _rule_form(tenancy, [webhook("ftp://example.com/x")]),
        "no_channel": _rule_form(tenancy, []),
        "not_json": {**_rule_form(tenancy, []), "channels": "[{"},
    }

    pages = {name: console.post("/admin/alerts/alertrule/add/", form) for name, form in refusals.items()}

    assert {name: page.status_code for name, page in pages.items()} == dict.fromkeys(refusals, 200)
    text = {name: page.content.decode() for name, page in pages.items()}
    assert 'id="id_event_pattern_error"><li>Use an event kind such as' in text["bad_pattern"]
    # The API's "channels.0.url", on the channels field.
    assert 'id="id_channels_error"><li>0.url: Only http and https URLs are allowed.' in text["bad_url"]
    assert 'id="id_channels_error"><li>This field is required.' in text["no_channel"]
    assert 'id="id_channels_error"><li>Enter a valid JSON.' in text["not_json"]
    assert not AlertRule.objects.exists()


def test_send_test_fans_a_test_event_out_to_the_selected_rule(console, tenancy, published,
                                                              django_capture_on_commit_callbacks):
    rule = make_rule(workspace=tenancy.workspace, channels=[webhook("http://127.0.0.1:9/hook")])

    with django_capture_on_commit_callbacks(execute=True):
        response = console.post("/admin/alerts/alertrule/", {"action": "send_test", "_selected_action": [str(rule.pk)]},
                                follow=True)

    assert "Sent a test alert for 1 rule" in response.content.decode()
    delivery = Delivery.objects.get(rule=rule)
    assert delivery.event.kind == "agent.test"
    assert published.deliveries == [str(delivery.id)]
