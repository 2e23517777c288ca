"""Who may do what on alert rules and the events listing: roles, key scopes, workspaces."""

import pytest

from agents.events import agent_event
from agents.services.lifecycle import agent_delete
from alerts.models import AlertRule
from fleet.events import emit
from tests.factories.alerts import make_rule, webhook
from tests.factories.workspaces import make_api_key
from tests.support import client_for

pytestmark = pytest.mark.django_db

HOOK = "http://127.0.0.1:9/hook"
NEW_RULE = {"name": "New", "eventPattern": "*", "channels": [webhook(HOOK)]}


def route(tenancy, rule, name):
    """(method, url, body) of each route."""
    base = f"/api/workspaces/{tenancy.workspace.id}"
    return {
        "list": ("get", f"{base}/alert-rules", None),
        "events": ("get", f"{base}/events", None),
        "create": ("post", f"{base}/alert-rules", NEW_RULE),
        "update": ("patch", f"{base}/alert-rules/{rule.id}", {"name": "Renamed"}),
        "test": ("post", f"{base}/alert-rules/{rule.id}/test", None),
        "delete": ("delete", f"{base}/alert-rules/{rule.id}", None),
    }[name]


READS = ("list", "events")
WRITES = ("create", "update", "test", "delete")


def call(client, tenancy, rule, name):
    method, url, payload = route(tenancy, rule, name)
    return getattr(client, method)(url, payload, format="json")


@pytest.fixture
def rule(tenancy):
    return make_rule(workspace=tenancy.workspace, channels=[webhook(HOOK)])


@pytest.mark.parametrize("who", ["owner", "admin", "editor", "viewer", "platform_admin"])
@pytest.mark.parametrize("name", READS)
def test_every_member_and_a_platform_admin_may_read(tenancy, rule, who, name):
    assert call(tenancy.client(who), tenancy, rule, name).status_code == 200


@pytest.mark.parametrize("who", ["owner", "admin", "platform_admin"])
@pytest.mark.parametrize("name", WRITES)
def test_owners_admins_and_platform_admins_may_write(tenancy, rule, who, name):
    assert call(tenancy.client(who), tenancy, rule, name).status_code == 200


@pytest.mark.parametrize("who", ["editor", "viewer"])
@pytest.mark.parametrize("name", WRITES)
def test_editors_and_viewers_may_not_write(tenancy, rule, who, name):
    response = call(tenancy.client(who), tenancy, rule, name)

    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"
    rule.refresh_from_db()
    assert rule.name == "Ops"
    assert AlertRule.objects.count() == 1


@pytest.mark.parametrize("name", READS + WRITES)
def test_an_outsider_does_not_even_see_the_workspace(tenancy, rule, name):
    response = call(tenancy.client("outsider"), tenancy, rule, name)

    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


@pytest.mark.parametrize("name", READS + WRITES)
def test_no_credential_is_a_401(tenancy, rule, name):
    response = call(tenancy.client("anonymous"), tenancy, rule, name)

    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


@pytest.mark.parametrize("scopes", [["agents:read"], ["agents:write"], ["agents:read", "agents:write"]])
@pytest.mark.parametrize("name", READS)
def test_a_key_with_an_agents_scope_may_read(tenancy, rule, scopes, name):
    assert call(client_for(api_key=tenancy.key(*scopes)), tenancy, rule, name).status_code == 200


@pytest.mark.parametrize("name", READS)
def test_a_key_with_only_workspaces_read_may_not_read_rules_or_events(tenancy, rule, name):
    response = call(client_for(api_key=tenancy.key("workspaces:read")), tenancy, rule, name)

    assert response.status_code == 403
    assert response.json()["code"] == "missing_scope"


@pytest.mark.parametrize("name", WRITES)
def test_a_key_with_agents_write_may_write(tenancy, rule, name):
    assert call(client_for(api_key=tenancy.key("agents:write")), tenancy, rule, name).status_code == 200


@pytest.mark.parametrize("scopes", [["agents:read"], ["workspaces:read"]])
@pytest.mark.parametrize("name", WRITES)
def test_a_key_without_agents_write_may_not_write(tenancy, rule, scopes, name):
    response = call(client_for(api_key=tenancy.key(*scopes)), tenancy, rule, name)

    assert response.status_code == 403
    assert response.json()["code"] == "missing_scope"
    assert AlertRule.objects.count() == 1


@pytest.mark.parametrize("name", READS + WRITES)
def test_a_key_of_another_workspace_is_refused(tenancy, rule, name):
    response = call(tenancy.client("other-key"), tenancy, rule, name)

    assert response.status_code == 403
    assert response.json()["code"] == "wrong_workspace"


def test_a_rule_created_with_a_key_is_created_by_the_keys_issuer(tenancy):
    _, raw = make_api_key(workspace=tenancy.workspace, created_by=tenancy.admin, scopes=["agents:write"])
    client = client_for(api_key=raw)

    response = client.post(f"/api/workspaces/{tenancy.workspace.id}/alert-rules", NEW_RULE, format="json")

    assert response.status_code == 200
    assert response.json()["createdBy"] == str(tenancy.admin.id)


def test_a_key_never_sees_the_events_of_a_remote_docker_agent_a_session_assigned_to_its_workspace(tenancy):
    remote = tenancy.agent(name="on-my-host", deploy_target="remote-docker", execution_target_id="remote:h1")
    gone = tenancy.agent(name="was-on-my-host", deploy_target="remote-docker", execution_target_id="remote:h1")
    local = tenancy.agent(name="on-docker")
    agent_event(remote, "agent.error", "remote failed")
    agent_event(gone, "agent.stopped", "remote stopped")
    agent_delete(agent=gone)  # its events now name an agent that no longer exists
    agent_event(local, "agent.error", "local failed")
    emit("budget.checked", workspace_ids=[tenancy.workspace.id])  # about no agent at all
    url = f"/api/workspaces/{tenancy.workspace.id}/events"

    by_key = client_for(api_key=tenancy.key("agents:read")).get(url).json()
    by_session = client_for(tenancy.viewer).get(url).json()

    assert [e["message"] for e in by_key] == ["", "local failed"]
    assert {e["message"] for e in by_session} == {
        "", "local failed", "Agent was-on-my-host was deleted.", "remote stopped", "remote failed"}
    assert {e["agentId"] for e in by_session} - {e["agentId"] for e in by_key} == {str(remote.id), str(gone.id)}
