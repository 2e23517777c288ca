"""Integrations on a real Hermes, deployed through the API by a real worker: `sync` writes
Fleet's block of $HERMES_HOME/.env (Hermes re-reads it at every turn, no restart), Hermes's own
loader reads back exactly the values, a second sync changes nothing, and a removal clears the
variable without restarting the agent."""

from __future__ import annotations

import json

import pytest

from agents.models import Agent
from tests.agents.runtimes.support import runtime_image
from tests.factories.accounts import UserFactory
from tests.infra.docker import exec_in
from tests.integrations.support import GITHUB_TOKEN, url
from tests.support import client_for

pytestmark = [pytest.mark.docker, pytest.mark.worker, pytest.mark.runtime]

# Quotes, a dollar sign and a backslash: what a .env file must carry through unchanged.
AWKWARD_URL = "postgres://agent:p'a\"s$HOME\\x@db.internal:5432/app"
LOADER = ("import json, os; from hermes_cli.env_loader import load_hermes_dotenv; "
          "load_hermes_dotenv(hermes_home='/state'); "
          "print(json.dumps({k: os.environ.get(k) for k in ('GITHUB_TOKEN', 'DATABASE_URL')}))")


@pytest.fixture
def live(docker_settings, docker_engine, celery_worker_live):
    docker_settings.AGENT_IMAGE_HERMES = runtime_image(docker_engine, "hermes")
    docker_settings.AGENT_READY_TIMEOUT_SECONDS = 60
    return celery_worker_live


def hermes_sees(docker_engine, agent) -> dict:
    """The variables as Hermes's own .env loader gives them (in a fresh process: clean env)."""
    container = docker_engine.containers.get(agent.container_id)
    result = exec_in(container, ["env", "GITHUB_TOKEN=", "DATABASE_URL=", "python", "-c", LOADER])
    assert result.exit_code == 0, result.output
    return json.loads(result.output.decode().strip().splitlines()[-1])


def env_file(docker_engine, agent) -> str:
    return exec_in(docker_engine.containers.get(agent.container_id), ["cat", "/state/.env"]).output.decode()


def test_sync_and_removal_on_a_real_hermes(live, docker_engine):
    client = client_for(UserFactory())
    response = client.post("/api/agents/deploy", {"runtime_family": "hermes", "ram_mb": 1024}, format="json")
    assert response.status_code == 201, response.content
    live.wait_until(lambda: Agent.objects.get(pk=response.json()["id"]).status in ("running", "error"), timeout=90)
    agent = Agent.objects.get(pk=response.json()["id"])
    assert agent.status == "running", agent.last_error
    started = docker_engine.containers.get(agent.container_id).attrs["State"]["StartedAt"]

    client.post(url(agent), {"provider": "github", "config": {"token": GITHUB_TOKEN}}, format="json")
    client.post(url(agent), {"provider": "postgresql", "config": {"database_url": AWKWARD_URL}}, format="json")
    body = client.post(url(agent, "/sync")).json()

    assert (body["runtime"], body["changed"], body["removed"]) == ("hermes", ["DATABASE_URL", "GITHUB_TOKEN"], [])
    assert hermes_sees(docker_engine, agent) == {"GITHUB_TOKEN": GITHUB_TOKEN, "DATABASE_URL": AWKWARD_URL}
    stat = exec_in(docker_engine.containers.get(agent.container_id),
        ["python", "-c", "import os; s = os.stat('/state/.env'); print(s.st_uid, oct(s.st_mode & 0o777))"])
    assert stat.output.decode().strip() == "10001 0o600"  # the runtime's user, nobody else

    written = env_file(docker_engine, agent)
    again = client.post(url(agent, "/sync")).json()
    assert (again["changed"], again["removed"]) == ([], [])
    assert env_file(docker_engine, agent) == written

    github = next(i for i in client.get(url(agent)).json() if i["provider"] == "github")
    assert client.delete(url(agent, f"/{github['id']}")).json() == {"success": True}
    live.wait_until(lambda: "GITHUB_TOKEN=\n" in env_file(docker_engine, agent), timeout=30)
    assert GITHUB_TOKEN not in env_file(docker_engine, agent)
    assert hermes_sees(docker_engine, agent)["GITHUB_TOKEN"] == ""
    assert docker_engine.containers.get(agent.container_id).attrs["State"]["StartedAt"] == started

    assert client.delete(f"/api/agents/{agent.id}").json() == {"success": True}
