"""GET/POST /agents/:id/integrations, PATCH/DELETE .../:iid: connect, read, change, remove."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection

from fleet.models import Event
from integrations.models import Integration
from tests.integrations.support import GITHUB_TOKEN, STRIPE_KEY, connect, url
from tests.support import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def editor(tenancy):
    return client_for(tenancy.editor)


def test_connecting_stores_the_integration_active_with_secrets_redacted(editor, agent):
    response = connect(editor, agent, "gitlab", {"token": GITHUB_TOKEN, "url": "http://127.0.0.1:8929"})

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["provider"] == "gitlab" and body["name"] == "GitLab" and body["category"] == "developer-tools"
    assert (body["status"], body["authType"], body["mcpEnabled"]) == ("active", "api_key", False)
    assert body["config"] == {"token": "[REDACTED]", "url": "http://127.0.0.1:8929"}
    assert body["envVars"] == ["GITLAB_PERSONAL_ACCESS_TOKEN", "GITLAB_URL"]
    assert body["lastTestedAt"] is None and body["lastTestResult"] is None and body["createdAt"]
    assert GITHUB_TOKEN not in response.content.decode()


def test_secrets_are_encrypted_at_rest_and_plain_fields_are_not(editor, agent):
    connect(editor, agent, "gitlab", {"token": GITHUB_TOKEN, "url": "http://127.0.0.1:8929"})

    with connection.cursor() as cursor:
        cursor.execute("SELECT config::text, secrets FROM integrations_integration")
        config, secrets = cursor.fetchone()
    assert "127.0.0.1:8929" in config and GITHUB_TOKEN not in config
    assert secrets.startswith("v1:") and GITHUB_TOKEN not in secrets
    assert Integration.objects.get().secrets == f'{{"token": "{GITHUB_TOKEN}"}}'


def test_connecting_emits_integration_connected_without_the_credential(editor, agent, tenancy):
    body = connect(editor, agent).json()

    event = Event.objects.get(kind="integration.connected")
    assert event.agent_id == agent.id and event.workspace_ids == [str(tenancy.workspace.id)]
    assert event.data["provider"] == "github" and event.data["integration_id"] == body["id"]
    assert GITHUB_TOKEN not in str(event.data) + event.message


def test_the_list_shows_every_integration_of_the_agent_redacted(editor, agent, tenancy):
    connect(editor, agent)
    connect(editor, agent, "stripe", {"secret_key": STRIPE_KEY})
    connect(editor, tenancy.agent(), "notion", {"token": "secret_notion_xxx"})  # another agent's

    response = client_for(tenancy.viewer).get(url(agent))

    assert response.status_code == 200
    assert [(i["provider"], i["config"]) for i in response.json()] == [
        ("github", {"token": "[REDACTED]"}), ("stripe", {"secret_key": "[REDACTED]"})]


def test_writing_redacted_back_keeps_the_stored_secret(editor, agent):
    iid = connect(editor, agent, "jira", {"domain": "acme.atlassian.net", "email": "a@acme.test",
                                          "api_token": "jira-secret-1"}).json()["id"]

    response = editor.patch(url(agent, f"/{iid}"), {"config": {"api_token": "[REDACTED]", "email": "b@acme.test"}},
                            format="json")

    assert response.status_code == 200, response.content
    assert response.json()["config"] == {"domain": "acme.atlassian.net", "email": "b@acme.test",
                                         "api_token": "[REDACTED]"}
    assert '"jira-secret-1"' in Integration.objects.get().secrets


def test_a_new_secret_replaces_the_stored_one(editor, agent):
    iid = connect(editor, agent).json()["id"]

    editor.patch(url(agent, f"/{iid}"), {"config": {"token": "ghp_new"}}, format="json")

    assert Integration.objects.get().secrets == '{"token": "ghp_new"}'


def test_an_optional_field_can_be_cleared(editor, agent):
    iid = connect(editor, agent, "slack", {"bot_token": "xoxb-1", "default_channel": "#ops"}).json()["id"]

    body = editor.patch(url(agent, f"/{iid}"), {"config": {"default_channel": ""}}, format="json").json()

    assert body["config"] == {"bot_token": "[REDACTED]"} and body["envVars"] == ["SLACK_BOT_TOKEN"]


def test_defaults_are_mapped_to_the_environment(editor, agent):
    body = connect(editor, agent, "datadog", {"api_key": "dd-1"}).json()

    assert body["envVars"] == ["DD_API_KEY", "DD_SITE"]


@pytest.mark.parametrize(("provider", "config", "field", "message"), [
    ("github", {}, "config.token", "This field is required."),
    ("github", {"token": "x", "owner": "me"}, "config.owner", "Unknown field for GitHub."),
    ("github", {"token": 5}, "config.token", "Must be a string."),
    ("github", {"token": "[REDACTED]"}, "config.token", "No stored value to keep: send the secret itself."),
    ("datadog", {"api_key": "k", "site": "example.com"}, "config.site", "Must be one of"),
    ("mysql", {"host": "db", "user": "u", "password": "p", "database": "d", "port": "abc"}, "config.port",
     "Must be an integer."),
    ("gitlab", {"token": "x", "url": "http://169.254.169.254/"}, "config.url", "metadata"),
    ("gitlab", {"token": "x", "url": "ftp://127.0.0.1:8929"}, "config.url", ""),
    ("no-such-provider", {}, "provider", "Unknown provider"),
])
def test_bad_config_is_a_400_naming_the_field(editor, agent, provider, config, field, message):
    response = connect(editor, agent, provider, config)

    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "validation_error" and message in body["fields"][field][0]
    assert not Integration.objects.exists()


@pytest.mark.parametrize("body", [{"config": {}}, {"provider": 5}, {"provider": "github", "config": "token"},
                                  {"provider": "github", "config": {"token": "x"}, "mcpEnabled": "maybe"}])
def test_a_malformed_body_is_a_400(editor, agent, body):
    response = editor.post(url(agent), body, format="json")

    assert response.status_code == 400 and response.json()["code"] == "validation_error"


def test_an_oauth_provider_is_connected_through_its_authorization(editor, agent):
    response = connect(editor, agent, "twitter", {"client_id": "cid", "client_secret": "cs"})

    assert response.status_code == 400 and response.json()["code"] == "oauth_required"


def test_a_provider_is_connected_once_per_agent(editor, agent):
    connect(editor, agent)

    response = connect(editor, agent)

    assert response.status_code == 409 and response.json()["code"] == "conflict"


def test_oauth_managed_fields_cannot_be_written(editor, agent):
    integration = Integration.objects.create(agent=agent, provider="twitter", config={"client_id": "c"},
                                             secrets='{"access_token": "a", "client_secret": "s"}')

    response = editor.patch(url(agent, f"/{integration.id}"), {"config": {"access_token": "t"}}, format="json")

    assert response.status_code == 400
    assert response.json()["fields"] == {
        "config.access_token": ["Set by the OAuth authorization; it cannot be written."]}


def test_an_empty_patch_is_a_400(editor, agent):
    iid = connect(editor, agent).json()["id"]

    response = editor.patch(url(agent, f"/{iid}"), {}, format="json")

    assert response.status_code == 400 and response.json()["code"] == "validation_error"


def test_removing_deletes_the_record_and_its_credentials(editor, agent):
    iid = connect(editor, agent).json()["id"]

    response = editor.delete(url(agent, f"/{iid}"))

    assert (response.status_code, response.json()) == (200, {"success": True})
    assert not Integration.objects.exists()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM integrations_integration")
        assert cursor.fetchone()[0] == 0


def test_removing_from_a_stopped_agent_queues_nothing(editor, agent, django_capture_on_commit_callbacks):
    iid = connect(editor, agent).json()["id"]

    with django_capture_on_commit_callbacks() as callbacks:
        editor.delete(url(agent, f"/{iid}"))

    assert callbacks == []


def test_deleting_the_agent_deletes_its_integrations(editor, agent):
    connect(editor, agent)

    agent.delete()

    assert not Integration.objects.exists()


@pytest.mark.parametrize("method", ["patch", "delete"])
def test_an_unknown_or_another_agents_integration_is_404(editor, agent, tenancy, method):
    other = connect(editor, tenancy.agent()).json()["id"]

    for iid in (other, uuid.uuid4()):
        response = getattr(editor, method)(url(agent, f"/{iid}"), {"config": {}}, format="json")
        assert response.status_code == 404 and response.json()["code"] == "not_found"


# -- MCP ------------------------------------------------------------------------------------------


def test_mcp_can_be_turned_on_and_off_for_a_provider_that_has_a_server(editor, agent):
    iid = connect(editor, agent, "stripe", {"secret_key": STRIPE_KEY}).json()["id"]

    on = editor.patch(url(agent, f"/{iid}"), {"mcpEnabled": True}, format="json")
    off = editor.patch(url(agent, f"/{iid}"), {"mcpEnabled": False}, format="json")

    assert (on.status_code, on.json()["mcpEnabled"], on.json()["mcpAvailable"]) == (200, True, True)
    assert off.json()["mcpEnabled"] is False


def test_mcp_on_a_provider_without_a_server_is_a_400(editor, agent):
    iid = connect(editor, agent).json()["id"]

    response = editor.patch(url(agent, f"/{iid}"), {"mcpEnabled": True}, format="json")

    assert response.status_code == 400 and "mcpEnabled" in response.json()["fields"]


def test_mcp_needs_the_fields_its_server_uses(editor, agent):
    response = connect(editor, agent, "supabase", {"url": "http://127.0.0.1:54321", "service_role_key": "srk"},
                       mcpEnabled=True)

    assert response.status_code == 400
    assert set(response.json()["fields"]) == {"config.access_token", "config.project_ref"}


def test_mcp_servers_are_applied_to_openclaw_agents_only(editor, tenancy):
    hermes = tenancy.agent(runtime_family="hermes")

    response = connect(editor, hermes, "notion", {"token": "secret_n"}, mcpEnabled=True)

    assert response.status_code == 409 and response.json()["code"] == "unsupported"
