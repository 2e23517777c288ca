"""Integrations on a real OpenClaw, deployed through the API by a real worker: the variables at
creation, `sync` through config.patch, removal without a restart, and MCP servers carried into
the runtime config by a redeploy (and taken out by the next one)."""

from __future__ import annotations

import pytest

from agents.gateway import gateway_for
from agents.models import Agent
from tests.agents.runtimes.support import runtime_image
from tests.factories.accounts import UserFactory
from tests.integrations.support import GITHUB_TOKEN, STRIPE_KEY, url
from tests.support import client_for

pytestmark = [pytest.mark.docker, pytest.mark.worker, pytest.mark.runtime]


@pytest.fixture
def live(docker_settings, docker_engine, celery_worker_live):
    docker_settings.AGENT_IMAGE_OPENCLAW = runtime_image(docker_engine, "openclaw")
    docker_settings.AGENT_READY_TIMEOUT_SECONDS = 90
    return celery_worker_live


@pytest.fixture
def client(live):
    return client_for(UserFactory())


def wait_running(live, agent_id) -> Agent:
    live.wait_until(lambda: Agent.objects.get(pk=agent_id).status in ("running", "error"), timeout=150)
    agent = Agent.objects.get(pk=agent_id)
    assert agent.status == "running", agent.last_error
    return agent


def config(agent) -> dict:
    return gateway_for(agent).config_get()["config"]


def env_vars(agent) -> dict:
    return (config(agent).get("env") or {}).get("vars") or {}


def mcp_servers(agent) -> dict:
    return (config(agent).get("mcp") or {}).get("servers") or {}


def container_env(docker_engine, agent) -> dict:
    items = docker_engine.containers.get(agent.container_id).attrs["Config"]["Env"]
    return dict(item.split("=", 1) for item in items)


def started_at(docker_engine, agent) -> str:
    return docker_engine.containers.get(agent.container_id).attrs["State"]["StartedAt"]


def redeploy(client, live, agent) -> Agent:
    assert client.post(f"/api/agents/{agent.id}/stop").status_code == 200
    response = client.post(f"/api/agents/{agent.id}/redeploy")
    assert response.status_code == 200, response.content
    return wait_running(live, agent.id)


def test_sync_removal_and_mcp_on_a_real_openclaw(client, live, docker_engine):
    response = client.post("/api/agents/deploy", {"runtime_family": "openclaw", "ram_mb": 2048}, format="json")
    assert response.status_code == 201, response.content
    agent = wait_running(live, response.json()["id"])

    # Connected while running: `sync` pushes it through config.patch and says what changed.
    assert client.post(url(agent), {"provider": "github", "config": {"token": GITHUB_TOKEN}},
                       format="json").status_code == 201
    first = client.post(url(agent, "/sync"))
    assert first.status_code == 200, first.content
    body = first.json()
    assert (body["success"], body["runtime"], body["envVars"], body["changed"], body["removed"]) == (
        True, "openclaw", ["GITHUB_TOKEN"], ["GITHUB_TOKEN"], [])
    assert "GITHUB_TOKEN" in env_vars(agent)
    assert GITHUB_TOKEN not in first.content.decode()

    # The same state again changes nothing.
    again = client.post(url(agent, "/sync")).json()
    assert (again["changed"], again["removed"]) == ([], [])

    # Stripe with its MCP server: the variable now, the server at the next redeploy.
    stripe = client.post(url(agent), {"provider": "stripe", "config": {"secret_key": STRIPE_KEY}, "mcpEnabled": True},
                         format="json").json()
    assert client.post(url(agent, "/sync")).json()["changed"] == ["STRIPE_SECRET_KEY"]
    assert "fleet-stripe" not in mcp_servers(agent)

    # Removing takes the variable out of the running runtime without restarting it.
    github = next(i for i in client.get(url(agent)).json() if i["provider"] == "github")
    before = started_at(docker_engine, agent)
    assert client.delete(url(agent, f"/{github['id']}")).json() == {"success": True}
    live.wait_until(lambda: "GITHUB_TOKEN" not in env_vars(agent), timeout=30)
    assert started_at(docker_engine, agent) == before
    assert Agent.objects.get(pk=agent.pk).status == "running"

    # The redeploy: the new workload has the variables at creation, and once the runtime runs
    # the MCP server is in its config.
    agent = redeploy(client, live, agent)
    environment = container_env(docker_engine, agent)
    assert environment["STRIPE_SECRET_KEY"] == STRIPE_KEY and "GITHUB_TOKEN" not in environment
    servers = live.wait_until(lambda: mcp_servers(agent).get("fleet-stripe") and mcp_servers(agent), timeout=60)
    server = servers["fleet-stripe"]
    assert (server["command"], server["args"]) == ("npx", ["-y", "@stripe/mcp", "--tools=all"])
    assert set(server["env"]) == {"STRIPE_SECRET_KEY"}

    # Turned off, it is gone after the next redeploy.
    assert client.patch(url(agent, f"/{stripe['id']}"), {"mcpEnabled": False}, format="json").status_code == 200
    assert "fleet-stripe" in mcp_servers(agent)
    agent = redeploy(client, live, agent)
    live.wait_until(lambda: "fleet-stripe" not in mcp_servers(agent) and "STRIPE_SECRET_KEY" in env_vars(agent),
                    timeout=60)

    assert client.delete(f"/api/agents/{agent.id}").json() == {"success": True}
