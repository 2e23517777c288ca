"""Deploy and lifecycle end to end: the API, a real Celery worker on Redis, a real Docker engine."""

from __future__ import annotations

import time

import pytest
import requests

from agents.gateway.tokens import usage_token_digest
from agents.models import Agent
from fleet.models import Event
from tests.factories.accounts import UserFactory
from tests.infra.docker import exec_in
from tests.support import client_for, run_in_threads

pytestmark = [pytest.mark.docker, pytest.mark.worker]


@pytest.fixture
def live(docker_settings, celery_worker_live):
    docker_settings.AGENT_READY_TIMEOUT_SECONDS = 30
    return celery_worker_live


@pytest.fixture
def owner(live):
    return UserFactory()


@pytest.fixture
def client(owner):
    return client_for(owner)


def _status(agent_id):
    return Agent.objects.filter(pk=agent_id).values_list("status", flat=True).first()


def deploy_and_wait(client, live, **body) -> Agent:
    response = client.post("/api/agents/deploy", body, format="json")
    assert response.status_code == 201, response.content
    agent_id = response.json()["id"]
    live.wait_until(lambda: _status(agent_id) in ("running", "error"), timeout=60)
    agent = Agent.objects.get(pk=agent_id)
    assert agent.status == "running", agent.last_error
    return agent


def _env(container) -> dict[str, str]:
    return dict(item.split("=", 1) for item in container.attrs["Config"]["Env"])


def test_deploy_reaches_running_with_a_real_container(client, live, docker_engine):
    agent = deploy_and_wait(client, live, name="real", vcpu=0.5, ram_mb=600)

    container = docker_engine.containers.get(agent.container_id)
    assert container.status == "running"
    assert container.labels["fleet.agent_id"] == str(agent.id)
    assert container.labels["fleet.managed"] == "true"
    assert container.attrs["HostConfig"]["NanoCpus"] == 500_000_000
    assert container.attrs["HostConfig"]["Memory"] == 600 * 1024 * 1024
    env = _env(container)
    assert env["OPENCLAW_GATEWAY_TOKEN"] == agent.gateway_token
    assert env["OPENCLAW_GATEWAY_PORT"] == str(agent.gateway_host_port)  # host network: listens on its port
    assert env["FLEET_USAGE_URL"].endswith(f"/api/agents/{agent.id}/usage")
    assert usage_token_digest(env["FLEET_USAGE_TOKEN"]) == agent.usage_token_digest
    assert requests.get(f"http://127.0.0.1:{agent.gateway_host_port}/health", timeout=3).ok
    kinds = set(Event.objects.filter(agent_id=agent.id).values_list("kind", flat=True))
    assert {"agent.queued", "agent.running"} <= kinds

    detail = client.get(f"/api/agents/{agent.id}").json()
    assert (detail["status"], detail["container_id"]) == ("running", agent.container_id)
    assert 19000 <= detail["gateway_host_port"] <= 19999
    gateway = client.get(f"/api/agents/{agent.id}/gateway-url").json()
    assert gateway["port"] == agent.gateway_host_port
    assert gateway["url"] == f"http://{agent.id}.gw.localhost:8000/"  # its own origin on the gateway proxy


def test_lifecycle_actions_really_change_the_container(client, live, docker_engine):
    agent = deploy_and_wait(client, live)
    url = f"/api/agents/{agent.id}"

    stopped = client.post(f"{url}/stop")
    assert (stopped.status_code, stopped.json()["status"]) == (200, "stopped")
    assert docker_engine.containers.get(agent.container_id).status == "exited"

    Agent.objects.filter(pk=agent.pk).update(paused_reason="budget_exceeded")
    started = client.post(f"{url}/start")
    assert (started.status_code, started.json()["status"]) == (200, "running")
    assert started.json()["paused_reason"] is None
    container = docker_engine.containers.get(agent.container_id)
    assert container.status == "running"
    first_start = container.attrs["State"]["StartedAt"]

    restarted = client.post(f"{url}/restart")
    assert restarted.json() == {"success": True}
    assert docker_engine.containers.get(agent.container_id).attrs["State"]["StartedAt"] != first_start

    state_volume = f"fleet-agent-{agent.id.hex}-state"
    exec_in(docker_engine.containers.get(agent.container_id), ["sh", "-c", "echo kept >/state/marker"])
    client.post(f"{url}/stop")
    redeployed = client.post(f"{url}/redeploy")
    assert redeployed.json() == {"success": True, "status": "queued"}
    assert not docker_engine.containers.list(all=True, ignore_removed=True, filters={"id": agent.container_id})
    live.wait_until(lambda: _status(agent.id) == "running", timeout=60)
    fresh = Agent.objects.get(pk=agent.id)
    assert fresh.container_id and fresh.container_id != agent.container_id
    assert docker_engine.containers.get(fresh.container_id).status == "running"
    kept = exec_in(docker_engine.containers.get(fresh.container_id), ["cat", "/state/marker"])
    assert kept.output.decode().strip() == "kept"  # the redeploy kept the agent's state volume

    deleted = client.delete(url)
    assert deleted.json() == {"success": True}
    assert not docker_engine.containers.list(all=True, ignore_removed=True,
                                             filters={"label": f"fleet.agent_id={agent.id}"})
    assert not [v for v in docker_engine.volumes.list() if v.name == state_volume]
    assert not Agent.objects.filter(pk=agent.id).exists()


def test_a_container_killed_behind_our_back_shows_stopped_on_the_next_get(client, live, docker_engine):
    agent = deploy_and_wait(client, live)

    docker_engine.containers.get(agent.container_id).kill()

    assert client.get(f"/api/agents/{agent.id}").json()["status"] == "stopped"
    assert Event.objects.filter(agent_id=agent.id, kind="agent.stopped").exists()


def test_a_container_removed_behind_our_back_cannot_be_started(client, live, docker_engine):
    agent = deploy_and_wait(client, live)
    docker_engine.containers.get(agent.container_id).remove(force=True)

    assert client.get(f"/api/agents/{agent.id}").json()["status"] == "stopped"
    response = client.post(f"/api/agents/{agent.id}/start")
    assert (response.status_code, response.json()["code"]) == (400, "no_container")


def test_stop_during_deploy_leaves_the_workload_stopped(client, live, docker_engine):
    response = client.post("/api/agents/deploy", {}, format="json")
    agent_id = response.json()["id"]

    stop = client.post(f"/api/agents/{agent_id}/stop")
    assert stop.json()["status"] == "stopped"

    def settled():
        containers = docker_engine.containers.list(all=True, ignore_removed=True,
                                                   filters={"label": f"fleet.agent_id={agent_id}"})
        return not containers or all(c.status != "running" for c in containers)

    time.sleep(3)  # give the job time to run: it must not start anything
    live.wait_until(settled, timeout=30)
    assert _status(agent_id) == "stopped"


def test_two_concurrent_deploys_give_two_agents_on_two_ports(client, live, docker_engine):
    def deploy():
        return client.post("/api/agents/deploy", {}, format="json")

    answers = run_in_threads(deploy, deploy)

    ids = [a.json()["id"] for a in answers]
    assert len(set(ids)) == 2
    live.wait_until(lambda: all(_status(i) == "running" for i in ids), timeout=90)
    agents = Agent.objects.filter(pk__in=ids)
    assert len({a.gateway_host_port for a in agents}) == 2
    assert len({a.container_id for a in agents}) == 2


def test_an_unreachable_engine_is_502_on_requests_and_error_in_provisioning(client, live, docker_settings, tmp_path):
    agent = deploy_and_wait(client, live)
    docker_settings.DOCKER_HOST = f"unix://{tmp_path}/no-engine.sock"
    docker_settings.AGENT_PROVISION_MAX_RETRIES = 1
    docker_settings.AGENT_PROVISION_RETRY_BACKOFF_SECONDS = 0.1

    gateway = client.get(f"/api/agents/{agent.id}/gateway-url")
    assert (gateway.status_code, gateway.json()["code"]) == (502, "daemon_unreachable")
    assert client.get(f"/api/agents/{agent.id}").json()["status"] == "running"  # stored state, no 500
    stop = client.post(f"/api/agents/{agent.id}/stop")
    assert (stop.status_code, stop.json()["code"]) == (502, "daemon_unreachable")

    second = client.post("/api/agents/deploy", {}, format="json").json()["id"]
    live.wait_until(lambda: _status(second) == "error", timeout=30)
    failed = Agent.objects.get(pk=second)
    assert "could not be reached" in failed.last_error
    assert Event.objects.filter(agent_id=failed.id, kind="agent.error").exists()
