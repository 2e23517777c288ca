"""The exact bodies of the agent routes, byte for byte (tests.bodies.assert_body), with the
agent's container on the real test engine."""

from __future__ import annotations

import secrets

import pytest

from agents.models import Agent
from tests.bodies import assert_body
from tests.factories.agents import AgentFactory, place_on_engine

pytestmark = pytest.mark.django_db


@pytest.fixture
def placed(tenancy, docker_settings):
    """An agent of the tenancy with a real container on the test engine."""
    return place_on_engine(tenancy.agent())


def iso(value) -> str:
    return value.isoformat()


def deployed_fields(agent: Agent) -> dict:
    return {
        "id": str(agent.id), "name": agent.name, "status": agent.status, "runtime_family": agent.runtime_family,
        "deploy_target": agent.deploy_target, "execution_target_id": agent.execution_target_id,
        "sandbox_profile": agent.sandbox_profile, "vcpu": agent.vcpu, "ram_mb": agent.ram_mb,
        "disk_gb": agent.disk_gb, "node": agent.node, "container_name": agent.container_name,
        "created_at": iso(agent.created_at),
    }


def agent_fields(agent: Agent) -> dict:
    return {
        **deployed_fields(agent), "container_id": agent.container_id, "gateway_host_port": agent.gateway_host_port,
        "paused_reason": agent.paused_reason, "last_error": agent.last_error, "updated_at": iso(agent.updated_at),
        "sandbox_type": agent.sandbox_profile,
    }


def test_list_rows(tenancy):
    agent = tenancy.agent(name="listed", vcpu=1.5, paused_reason="budget_exceeded")

    response = tenancy.client("editor").get("/api/agents")

    agent.refresh_from_db()
    assert_body(response, [{
        "id": str(agent.id), "name": "listed", "status": "stopped", "runtime_family": "openclaw",
        "deploy_target": "docker", "execution_target_id": "docker", "sandbox_profile": "standard", "vcpu": 1.5,
        "ram_mb": 1024, "disk_gb": 10, "node": "local", "container_id": "", "paused_reason": "budget_exceeded",
        "last_error": "",
        "created_at": iso(agent.created_at),
        "sandbox_type": "standard", "isDirectOwner": False, "effectiveRole": "editor",
        "workspaces": [{"id": str(tenancy.workspace.id), "name": tenancy.workspace.name, "role": "member"}],
    }])


def test_deploy(user_client, settings):
    settings.DEFAULT_VCPU, settings.DEFAULT_RAM_MB, settings.DEFAULT_DISK_GB = 2, 2048, 20

    response = user_client.post("/api/agents/deploy", {"name": "fresh", "vcpu": 1.5}, format="json")

    agent = Agent.objects.get(pk=response.json()["id"])
    assert_body(response, {
        "id": str(agent.id), "name": "fresh", "status": "queued", "runtime_family": "openclaw",
        "deploy_target": "docker", "execution_target_id": "docker", "sandbox_profile": "standard",
        "vcpu": 1.5, "ram_mb": 2048, "disk_gb": 20, "node": "", "container_name": "",
        "created_at": iso(agent.created_at), "sandbox_type": "standard", "adjusted": {},
    }, status=201)


def test_adopt(user_client):
    response = user_client.post("/api/agents/adopt", {
        "name": "outside", "runtime_family": "openclaw", "host": "10.1.2.3", "port": 18789,
        "gateway_token": secrets.token_urlsafe(32),
    }, format="json")

    agent = Agent.objects.get(pk=response.json()["id"])
    assert_body(response, {
        "id": str(agent.id), "name": "outside", "status": "running", "runtime_family": "openclaw",
        "deploy_target": "external", "execution_target_id": "external", "sandbox_profile": "standard",
        "vcpu": 0, "ram_mb": 0, "disk_gb": 0, "node": "external", "container_name": "",
        "created_at": iso(agent.created_at), "container_id": "", "gateway_host_port": 18789,
        "paused_reason": None, "last_error": "", "updated_at": iso(agent.updated_at), "sandbox_type": "standard",
    }, status=201)


def test_detail_with_the_callers_role(tenancy, placed):
    agent = placed

    response = tenancy.client("editor").get(f"/api/agents/{agent.id}")

    agent.refresh_from_db()
    assert_body(response, {**agent_fields(agent), "effectiveRole": "editor", "isDirectOwner": False,
                           "restartCount": 0, "oomKilled": False})
    assert agent_fields(agent)["vcpu"] == 1.0 and b'"vcpu":1.0' in response.content


@pytest.mark.parametrize("action", ["start", "stop"])
def test_start_and_stop_answer_the_agent(tenancy, placed, action):
    agent = placed
    Agent.objects.filter(pk=agent.pk).update(status="stopped", last_error="old", paused_reason="budget_exceeded")

    response = tenancy.client("editor").post(f"/api/agents/{agent.id}/{action}")

    agent.refresh_from_db()
    assert_body(response, agent_fields(agent))


def test_restart(tenancy, placed):
    agent = placed

    assert_body(tenancy.client("editor").post(f"/api/agents/{agent.id}/restart"), {"success": True})


def test_redeploy(tenancy, placed):
    agent = placed
    Agent.objects.filter(pk=agent.pk).update(status="stopped")

    response = tenancy.client("editor").post(f"/api/agents/{agent.id}/redeploy")

    assert_body(response, {"success": True, "status": "queued"})


def test_delete(tenancy, placed):
    agent = placed

    assert_body(tenancy.client("agent_owner").delete(f"/api/agents/{agent.id}"), {"success": True})


def test_gateway_url(tenancy, placed, settings):
    settings.NORA_PUBLIC_URL = settings.NEXTAUTH_URL = ""
    agent, port = placed, placed.gateway_host_port

    response = tenancy.client("viewer").get(f"/api/agents/{agent.id}/gateway-url")

    assert_body(response, {"url": f"http://{agent.id}.gw.localhost:8000/", "port": port})


def test_workspace_agent_list(tenancy):
    agent = tenancy.agent(name="listed")

    response = tenancy.client("agent_owner").get(f"/api/workspaces/{tenancy.workspace.id}/agents")

    assert_body(response, [{"agentId": str(agent.id), "agentName": "listed", "agentStatus": "stopped",
                            "role": "member", "isDirectOwner": True}])


def test_workspace_agent_assign_and_again(tenancy):
    agent = AgentFactory(owner=tenancy.editor)
    client, url = tenancy.client("editor"), f"/api/workspaces/{tenancy.workspace.id}/agents"
    expected = {"workspace_id": str(tenancy.workspace.id), "agent_id": str(agent.id), "role": "ops"}

    assert_body(client.post(url, {"agentId": str(agent.id), "role": "ops"}, format="json"), expected, status=201)
    assert_body(client.post(url, {"agentId": str(agent.id)}, format="json"), expected)


def test_workspace_agent_candidates(tenancy):
    agent = AgentFactory(owner=tenancy.editor, name="mine")

    response = tenancy.client("editor").get(f"/api/workspaces/{tenancy.workspace.id}/agent-candidates")

    assert_body(response, [{"agentId": str(agent.id), "name": "mine", "status": "running", "assigned": False}])


def test_workspace_agent_unassign(tenancy):
    agent = tenancy.agent()

    response = tenancy.client("admin").delete(f"/api/workspaces/{tenancy.workspace.id}/agents/{agent.id}")

    assert_body(response, {"success": True})
