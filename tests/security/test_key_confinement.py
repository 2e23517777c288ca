"""Defect 1: a workspace API key never reaches past its workspace through agent-candidates or
assignment, even to other agents its issuer owns."""

from __future__ import annotations

import pytest

from agents.models import WorkspaceAgent
from tests.factories.agents import AgentFactory, WorkspaceAgentFactory
from tests.factories.workspaces import WorkspaceFactory

pytestmark = pytest.mark.django_db


def test_a_keys_candidates_are_only_its_issuers_agents_already_in_its_workspace(tenancy):
    inside = AgentFactory(owner=tenancy.owner, name="inside")
    WorkspaceAgentFactory(workspace=tenancy.workspace, agent=inside)
    elsewhere = AgentFactory(owner=tenancy.owner, name="elsewhere")
    WorkspaceAgentFactory(workspace=WorkspaceFactory(owner=tenancy.owner), agent=elsewhere)
    AgentFactory(owner=tenancy.owner, name="unassigned")

    rows = tenancy.client("key:agents:write").get(f"/api/workspaces/{tenancy.workspace.id}/agent-candidates").json()

    assert [(r["name"], r["assigned"]) for r in rows] == [("inside", True)]


def test_a_key_cannot_pull_its_issuers_other_agent_into_its_workspace_then_operate_it(tenancy):
    elsewhere = AgentFactory(owner=tenancy.owner)
    client = tenancy.client("key:agents:write")

    assigned = client.post(f"/api/workspaces/{tenancy.workspace.id}/agents", {"agentId": str(elsewhere.id)},
                           format="json")
    operate = client.post(f"/api/agents/{elsewhere.id}/stop")

    assert (assigned.status_code, assigned.json()["code"]) == (404, "not_found")
    assert not WorkspaceAgent.objects.filter(agent=elsewhere).exists()
    assert operate.status_code == 404


def test_a_key_may_relabel_an_agent_already_in_its_workspace(tenancy):
    agent = AgentFactory(owner=tenancy.owner)
    WorkspaceAgentFactory(workspace=tenancy.workspace, agent=agent)

    response = tenancy.client("key:agents:write").post(
        f"/api/workspaces/{tenancy.workspace.id}/agents", {"agentId": str(agent.id), "role": "ops"}, format="json"
    )

    assert response.status_code == 200
    assert WorkspaceAgent.objects.get(agent=agent).role == "ops"


def test_a_session_still_assigns_its_own_agents(tenancy):
    agent = AgentFactory(owner=tenancy.editor)

    response = tenancy.client("editor").post(
        f"/api/workspaces/{tenancy.workspace.id}/agents", {"agentId": str(agent.id)}, format="json"
    )

    assert response.status_code == 201
