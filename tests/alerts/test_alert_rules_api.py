import pytest
from django.db import connection

from alerts.models import AlertChannel, AlertRule
from tests.factories.alerts import make_rule, webhook
from tests.support import client_for

pytestmark = pytest.mark.django_db

HOOK = "http://127.0.0.1:9/hook"
SECRET = "a-signing-secret-long-enough"


def rules_url(workspace) -> str:
    return f"/api/workspaces/{workspace.id}/alert-rules"


def rule_url(rule) -> str:
    return f"/api/workspaces/{rule.workspace_id}/alert-rules/{rule.id}"


def valid_body(**overrides) -> dict:
    body = {
        "name": "  Agent errors  ",
        "eventPattern": "agent.error",
        "channels": [
            {"type": "webhook", "url": HOOK, "headers": {"X-Team": "ops"}, "secret": SECRET},
            {"type": "email", "to": ["ops@example.com"], "subjectPrefix": "[fleet]"},
        ],
    }
    body.update(overrides)
    return body


def test_an_admin_creates_a_rule_and_gets_it_back_with_the_secret_redacted(tenancy):
    response = client_for(tenancy.admin).post(rules_url(tenancy.workspace), valid_body(), format="json")

    assert response.status_code == 200
    rule = response.json()
    assert set(rule) == {"id", "workspaceId", "createdBy", "name", "eventPattern", "channels", "enabled",
                         "lastFiredAt", "lastError", "createdAt", "updatedAt"}
    assert rule["name"] == "Agent errors"
    assert rule["workspaceId"] == str(tenancy.workspace.id)
    assert rule["createdBy"] == str(tenancy.admin.id)
    assert rule["enabled"] is True
    assert rule["lastFiredAt"] is None and rule["lastError"] is None
    assert rule["channels"] == [
        {"type": "webhook", "url": HOOK, "headers": {"X-Team": "[REDACTED]"}, "secret": "[REDACTED]"},
        {"type": "email", "to": ["ops@example.com"], "subjectPrefix": "[fleet]"},
    ]


def test_the_webhook_secret_is_stored_encrypted(tenancy):
    client_for(tenancy.admin).post(rules_url(tenancy.workspace), valid_body(), format="json")

    channel = AlertChannel.objects.get(type="webhook")
    assert channel.secret == SECRET
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret, config::text FROM alerts_alertchannel WHERE id = %s", [channel.pk])
        stored_secret, stored_config = cursor.fetchone()
    assert SECRET not in stored_secret and stored_secret.startswith("v1:")
    assert SECRET not in stored_config


def test_a_viewer_lists_the_rules_of_the_workspace_only(tenancy):
    mine = make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], name="mine")
    make_rule(workspace=tenancy.other_workspace, channels=[webhook(HOOK)], name="theirs")

    response = client_for(tenancy.viewer).get(rules_url(tenancy.workspace))

    assert response.status_code == 200
    assert [r["id"] for r in response.json()] == [str(mine.id)]


def test_enabled_may_be_sent_as_false(tenancy):
    response = client_for(tenancy.owner).post(rules_url(tenancy.workspace), valid_body(enabled=False), format="json")
    assert response.status_code == 200
    assert response.json()["enabled"] is False


def test_patch_changes_only_the_given_fields(tenancy):
    rule = make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)], pattern="agent.*")

    response = client_for(tenancy.admin).patch(rule_url(rule), {"enabled": False, "name": " Quiet "}, format="json")

    assert response.status_code == 200
    body = response.json()
    assert (body["enabled"], body["name"], body["eventPattern"]) == (False, "Quiet", "agent.*")
    assert body["channels"] == [{"type": "webhook", "url": HOOK, "headers": {}}]


def test_patch_replaces_the_channel_list(tenancy):
    rule = make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)])

    response = client_for(tenancy.admin).patch(
        rule_url(rule), {"channels": [{"type": "email", "to": ["a@example.com", "b@example.com"]}]}, format="json"
    )

    assert response.status_code == 200
    assert response.json()["channels"] == [{"type": "email", "to": ["a@example.com", "b@example.com"]}]
    assert AlertChannel.objects.filter(rule=rule).count() == 1


def test_patch_with_the_redacted_secret_keeps_the_stored_one(tenancy):
    rule = make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK, secret=SECRET)])
    read_back = client_for(tenancy.admin).get(rules_url(tenancy.workspace)).json()[0]["channels"]
    read_back.append({"type": "email", "to": ["c@example.com"]})

    response = client_for(tenancy.admin).patch(rule_url(rule), {"channels": read_back}, format="json")

    assert response.status_code == 200
    assert AlertChannel.objects.get(rule=rule, type="webhook").secret == SECRET


def test_patch_with_the_redacted_secret_for_a_new_url_is_refused(tenancy):
    rule = make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)])

    response = client_for(tenancy.admin).patch(
        rule_url(rule), {"channels": [webhook("http://127.0.0.1:10/other", secret="[REDACTED]")]}, format="json"
    )

    assert response.status_code == 400
    assert "channels.0.secret" in response.json()["fields"]


def test_patch_without_a_secret_removes_the_signing(tenancy):
    rule = make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK, secret=SECRET)])

    response = client_for(tenancy.admin).patch(rule_url(rule), {"channels": [webhook(HOOK)]}, format="json")

    assert response.status_code == 200
    assert "secret" not in response.json()["channels"][0]
    assert AlertChannel.objects.get(rule=rule).secret is None


def test_patch_runs_the_same_validation(tenancy):
    rule = make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)])

    response = client_for(tenancy.admin).patch(
        rule_url(rule), {"eventPattern": "agent*", "channels": []}, format="json"
    )

    assert response.status_code == 400
    assert set(response.json()["fields"]) == {"eventPattern", "channels"}
    rule.refresh_from_db()
    assert rule.event_pattern == "agent.*"


def test_delete_removes_the_rule(tenancy):
    rule = make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)])

    response = client_for(tenancy.admin).delete(rule_url(rule))

    assert response.status_code == 200
    assert response.json() == {"success": True}
    assert not AlertRule.objects.filter(pk=rule.pk).exists()


@pytest.mark.parametrize("method", ["patch", "delete"])
def test_a_rule_of_another_workspace_is_not_found_through_this_one(tenancy, method):
    theirs = make_rule(workspace=tenancy.other_workspace, channels=[webhook(HOOK)])
    url = f"/api/workspaces/{tenancy.workspace.id}/alert-rules/{theirs.id}"

    response = getattr(client_for(tenancy.owner), method)(url, {}, format="json")

    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert AlertRule.objects.filter(pk=theirs.pk).exists()


def test_an_unknown_rule_is_not_found(tenancy):
    url = f"/api/workspaces/{tenancy.workspace.id}/alert-rules/00000000-0000-0000-0000-000000000000/test"
    assert client_for(tenancy.owner).post(url).status_code == 404


def test_an_unknown_workspace_is_not_found(tenancy):
    url = "/api/workspaces/00000000-0000-0000-0000-000000000000/alert-rules"
    response = client_for(tenancy.owner).get(url)
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


def test_malformed_json_is_a_400_not_a_500(tenancy):
    response = client_for(tenancy.owner).post(
        rules_url(tenancy.workspace), data="{not json", content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"
