"""/api/workspaces/:id/agents, agent-candidates, and removing an assignment."""

from __future__ import annotations

import pytest

from agents.models import Agent, WorkspaceAgent
from tests.factories.agents import AgentFactory, WorkspaceAgentFactory

pytestmark = pytest.mark.django_db

CALLERS = ("owner", "admin", "editor", "viewer", "platform_admin", "key:agents:write", "key:agents:read",
           "key:workspaces:read", "other-key", "outsider", "anonymous")


def _answer(response):
    body = response.json()
    return response.status_code, body.get("code") if isinstance(body, dict) else None


LIST_EXPECTED = {
    # Listing agents is reading agents: workspaces:read alone does not reach them.
    "key:workspaces:read": (403, "missing_scope"),
    "other-key": (403, "wrong_workspace"), "outsider": (404, "not_found"), "anonymous": (401, "not_authenticated"),
}
EDIT_EXPECTED = {
    "viewer": (403, "permission_denied"), "key:agents:read": (403, "missing_scope"), **LIST_EXPECTED,
}
ADMIN_EXPECTED = {
    "editor": (403, "permission_denied"), "key:agents:write": (403, "missing_scope"), **EDIT_EXPECTED,
}


@pytest.mark.parametrize("caller", CALLERS)
def test_viewers_and_up_list_the_workspace_agents(tenancy, caller):
    agent = tenancy.agent(name="listed")

    response = tenancy.client(caller).get(f"/api/workspaces/{tenancy.workspace.id}/agents")

    if caller in LIST_EXPECTED:
        assert _answer(response) == LIST_EXPECTED[caller]
        return
    assert response.status_code == 200
    assert response.json() == [
        {"agentId": str(agent.id), "agentName": "listed", "agentStatus": "stopped", "role": "member",
         "isDirectOwner": False}
    ]


def test_the_owner_sees_is_direct_owner(tenancy):
    tenancy.agent()

    rows = tenancy.client("agent_owner").get(f"/api/workspaces/{tenancy.workspace.id}/agents").json()

    assert rows[0]["isDirectOwner"] is True


@pytest.mark.parametrize("caller", CALLERS)
def test_editors_and_up_assign_their_own_agents(tenancy, caller):
    user = tenancy.owner if caller.startswith("key:") else getattr(tenancy, caller, None)
    agent = AgentFactory(owner=user) if user else AgentFactory()

    response = tenancy.client(caller).post(
        f"/api/workspaces/{tenancy.workspace.id}/agents", {"agentId": str(agent.id), "role": "ops"}, format="json"
    )

    if caller in EDIT_EXPECTED:
        assert _answer(response) == EDIT_EXPECTED[caller]
        assert not WorkspaceAgent.objects.exists()
        return
    if caller.startswith("key:"):  # a key never pulls an agent into its workspace (tests/security)
        assert _answer(response) == (404, "not_found")
        return
    assert response.status_code == 201, response.content
    assert response.json() == {"workspace_id": str(tenancy.workspace.id), "agent_id": str(agent.id), "role": "ops"}


def test_the_role_label_defaults_to_member_and_assigning_again_is_not_an_error(tenancy):
    agent = AgentFactory(owner=tenancy.editor)
    client = tenancy.client("editor")
    url = f"/api/workspaces/{tenancy.workspace.id}/agents"

    first = client.post(url, {"agentId": str(agent.id)}, format="json")
    again = client.post(url, {"agentId": str(agent.id)}, format="json")

    assert (first.status_code, first.json()["role"]) == (201, "member")
    assert (again.status_code, again.json()["role"]) == (200, "member")
    assert WorkspaceAgent.objects.filter(agent=agent).count() == 1


def test_assigning_an_agent_that_is_not_the_callers_is_404(tenancy):
    someone_elses = tenancy.agent()

    response = tenancy.client("editor").post(
        f"/api/workspaces/{tenancy.workspace.id}/agents", {"agentId": str(someone_elses.id)}, format="json"
    )

    assert _answer(response) == (404, "not_found")


@pytest.mark.parametrize("body", [{}, {"agentId": "nope"}, {"agentId": None}])
def test_a_missing_or_malformed_agent_id_is_400(tenancy, body):
    response = tenancy.client("editor").post(f"/api/workspaces/{tenancy.workspace.id}/agents", body, format="json")

    assert response.status_code == 400
    assert "agentId" in response.json()["fields"]


@pytest.mark.parametrize("caller", CALLERS)
def test_editors_and_up_list_their_candidates(tenancy, caller):
    response = tenancy.client(caller).get(f"/api/workspaces/{tenancy.workspace.id}/agent-candidates")

    if caller in EDIT_EXPECTED:
        assert _answer(response) == EDIT_EXPECTED[caller]
        return
    assert response.status_code == 200


def test_candidates_are_the_callers_own_agents_flagged_when_assigned(tenancy):
    mine_assigned = AgentFactory(owner=tenancy.editor, name="in")
    WorkspaceAgentFactory(workspace=tenancy.workspace, agent=mine_assigned)
    mine_free = AgentFactory(owner=tenancy.editor, name="out")
    tenancy.agent()  # not the editor's

    rows = tenancy.client("editor").get(f"/api/workspaces/{tenancy.workspace.id}/agent-candidates").json()

    assert sorted((r["agentId"], r["name"], r["assigned"]) for r in rows) == sorted(
        [(str(mine_assigned.id), "in", True), (str(mine_free.id), "out", False)]
    )
    assert all(set(r) == {"agentId", "name", "status", "assigned"} for r in rows)


@pytest.mark.parametrize("caller", CALLERS)
def test_admins_and_owners_remove_assignments_only(tenancy, caller):
    agent = tenancy.agent()

    response = tenancy.client(caller).delete(f"/api/workspaces/{tenancy.workspace.id}/agents/{agent.id}")

    if caller in ADMIN_EXPECTED:
        assert _answer(response) == ADMIN_EXPECTED[caller]
        assert WorkspaceAgent.objects.filter(agent=agent).exists()
        return
    assert response.json() == {"success": True}
    assert not WorkspaceAgent.objects.filter(agent=agent).exists()
    assert Agent.objects.filter(pk=agent.pk).exists()  # the agent itself stays


def test_removing_an_assignment_that_does_not_exist_is_404(tenancy):
    agent = AgentFactory()

    response = tenancy.client("admin").delete(f"/api/workspaces/{tenancy.workspace.id}/agents/{agent.id}")

    assert _answer(response) == (404, "not_found")
