"""The hard cap end to end: a real container on the real Docker engine, a real Celery worker.

The runtime reports usage with the ingest token it was given in its environment; crossing the
cap pauses the container; a manual start runs it again and the next sweep pauses it again;
an unreachable engine makes the pause fail and the following sweep finish it; removing the
budget leaves the agent stopped until started, and then nothing pauses it.
"""

from __future__ import annotations

import pytest

from agents.budgets.enforcement import budgets_sweep
from agents.models import Agent
from fleet.models import Event
from tests.factories.accounts import UserFactory
from tests.support import client_for

pytestmark = [pytest.mark.docker, pytest.mark.worker]


@pytest.fixture
def live(docker_settings, celery_worker_live):
    docker_settings.AGENT_READY_TIMEOUT_SECONDS = 30
    return celery_worker_live


def deploy_and_wait(client, live) -> Agent:
    """Deploy through the API and let the real worker provision the container."""
    response = client.post("/api/agents/deploy", {}, format="json")
    assert response.status_code == 201, response.content
    agent_id = response.json()["id"]
    live.wait_until(lambda: _state(agent_id)[0] in ("running", "error"), timeout=60)
    agent = Agent.objects.get(pk=agent_id)
    assert agent.status == "running", agent.last_error
    return agent


def _state(agent_id) -> tuple:
    return Agent.objects.filter(pk=agent_id).values_list("status", "paused_reason").first()


def _container_status(docker_engine, agent) -> str:
    container = docker_engine.containers.get(agent.container_id)
    return container.status


def _usage_token(docker_engine, agent) -> str:
    env = dict(item.split("=", 1) for item in docker_engine.containers.get(agent.container_id).attrs["Config"]["Env"])
    return env["FLEET_USAGE_TOKEN"]


def _count(agent, kind) -> int:
    return Event.objects.filter(agent_id=agent.id, kind=kind).count()


def test_a_hard_cap_pauses_the_real_container_and_the_sweep_pauses_it_again(live, docker_engine, docker_settings,
                                                                            tmp_path):
    owner = UserFactory()
    client = client_for(owner)
    agent = deploy_and_wait(client, live)
    budget = client.put(f"/api/agents/{agent.id}/budget", {"period": "daily", "limit_usd": 1}, format="json").json()

    runtime = client_for()
    runtime.credentials(HTTP_X_AGENT_TOKEN=_usage_token(docker_engine, agent))
    events = [{"request_id": "r1", "model": "gpt-4o", "provider": "openai", "input_tokens": 10,
               "output_tokens": 5, "cost_usd": 1.25}]
    assert runtime.post(f"/api/agents/{agent.id}/usage", {"events": events}, format="json").json() == {
        "accepted": 1, "duplicates": 0}

    # The worker commits the stop before it records the event: wait for both.
    live.wait_until(lambda: _state(agent.id) == ("stopped", "budget_exceeded")
                    and _count(agent, "agent.budget_exceeded"), timeout=60)
    assert _container_status(docker_engine, agent) == "exited"
    assert _count(agent, "agent.budget_exceeded") == 1
    report = client.get(f"/api/agents/{agent.id}/budget").json()
    assert (report["pausedReason"], report["budgets"][0]["bucket"]) == ("budget_exceeded", "hard")

    started = client.post(f"/api/agents/{agent.id}/start").json()
    assert (started["status"], started["paused_reason"]) == ("running", None)
    assert _container_status(docker_engine, agent) == "running"

    assert budgets_sweep().paused == 1  # the beat job's body, run now rather than in a minute
    assert _state(agent.id) == ("stopped", "budget_exceeded")
    assert _container_status(docker_engine, agent) == "exited"
    assert _count(agent, "agent.budget_exceeded") == 2

    # The engine goes away: the pause fails, is reported, and the next sweep completes it.
    client.post(f"/api/agents/{agent.id}/start")
    engine = docker_settings.DOCKER_HOST
    docker_settings.DOCKER_HOST = f"unix://{tmp_path}/no-engine.sock"
    assert budgets_sweep().pause_failed == 1
    assert _state(agent.id) == ("running", "budget_exceeded")
    assert _count(agent, "agent.budget_pause_failed") == 1
    docker_settings.DOCKER_HOST = engine
    assert _container_status(docker_engine, agent) == "running"
    assert budgets_sweep().paused == 1
    assert _container_status(docker_engine, agent) == "exited"

    # Removing the cap: the agent stays stopped until started, and then runs on.
    assert client.delete(f"/api/agents/{agent.id}/budget/{budget['id']}").json() == {"success": True}
    assert budgets_sweep().paused == 0
    assert _state(agent.id) == ("stopped", "budget_exceeded")
    client.post(f"/api/agents/{agent.id}/start")
    assert budgets_sweep().over_soft == 0
    assert _state(agent.id) == ("running", None)
    assert _container_status(docker_engine, agent) == "running"
