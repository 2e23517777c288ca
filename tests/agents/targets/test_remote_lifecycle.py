"""An agent's whole life on a Remote Docker host through the API: a real sshd in front of the
real engine, a real Celery worker, the real Hermes runtime image. Deploy (session, personal
host, no workspace), running, stats, logs, stop, start, restart, redeploy (its state kept),
delete — each checked on the engine itself; the same through a host reached with a password.
And an unreachable host: 502 daemon_unreachable on requests, `error` in provisioning."""

from __future__ import annotations

import pytest

from agents.backends.engine import workload_exec
from agents.backends.registry import backend_for
from agents.models import Agent, WorkspaceAgent
from tests.agents.runtimes.support import runtime_image
from tests.factories.accounts import UserFactory
from tests.infra.sshd import SshServer
from tests.support import client_for

from .conftest import host_body

pytestmark = [pytest.mark.docker, pytest.mark.worker, pytest.mark.runtime]


@pytest.fixture
def live(remote_settings, docker_settings, docker_engine, celery_worker_live):
    docker_settings.AGENT_IMAGE_HERMES = runtime_image(docker_engine, "hermes")
    docker_settings.DOCKER_READ_ONLY_ROOTFS = True  # the real images run on a read-only root
    docker_settings.AGENT_READY_TIMEOUT_SECONDS = 45
    return celery_worker_live


def _ready_host(client, sshd, docker_socket_path) -> dict:
    host = client.post("/api/remote-hosts", host_body(sshd, docker_socket_path), format="json").json()
    assert client.post(f"/api/remote-hosts/{host['id']}/test").json()["ok"] is True
    return host


def _status(agent_id):
    return Agent.objects.filter(pk=agent_id).values_list("status", flat=True).first()


def test_a_hermes_agent_lives_and_dies_on_a_remote_host(live, sshd, docker_socket_path, docker_engine):
    client = client_for(UserFactory())
    host = _ready_host(client, sshd, docker_socket_path)
    target = f"remote:{host['id']}"

    response = client.post("/api/agents/deploy", {"runtime_family": "hermes", "deploy_target": "remote-docker",
                                                  "execution_target_id": target}, format="json")
    assert response.status_code == 201, response.content
    assert (response.json()["deploy_target"], response.json()["execution_target_id"]) == ("remote-docker", target)
    agent_id = response.json()["id"]
    live.wait_until(lambda: _status(agent_id) in ("running", "error"), timeout=60)
    agent = Agent.objects.get(pk=agent_id)
    assert agent.status == "running", agent.last_error
    assert agent.runtime_version == "0.19.0"  # the gateway answered at the host's address
    assert not WorkspaceAgent.objects.filter(agent_id=agent_id).exists()  # rule (4): the user's, no workspace
    container = docker_engine.containers.get(agent.container_id)
    assert container.status == "running" and container.labels["fleet.agent_id"] == agent_id

    detail = client.get(f"/api/agents/{agent_id}").json()
    assert (detail["status"], detail["deploy_target"], detail["execution_target_id"]) == (
        "running", "remote-docker", target)
    listed = next(row for row in client.get("/api/agents").json() if row["id"] == agent_id)
    assert (listed["deploy_target"], listed["execution_target_id"]) == ("remote-docker", target)

    stats = client.get(f"/api/agents/{agent_id}/stats")
    assert stats.status_code == 200, stats.content
    assert stats.json()["running"] is True and stats.json()["memory_limit_mb"] == agent.ram_mb

    # The rest of the protocol over the same pinned connection: probe, state files, exec.
    backend = backend_for(agent)
    engine = docker_engine.version()
    assert backend.probe() == f"Docker {engine['Version']} (API {engine['ApiVersion']})"
    backend.write_state_file(agent, "remote-check.txt", b"written over ssh")
    assert backend.read_state_file(agent, "remote-check.txt") == b"written over ssh"
    ran = workload_exec(agent, ["cat", "/state/remote-check.txt"], timeout=15, max_output=1000)
    assert (ran.exit_code, ran.output) == (0, b"written over ssh")
    for _ in range(20):  # a fast command's output, often in the same packet as the answer's headers, is kept
        ran = workload_exec(agent, ["cat", "/state/remote-check.txt"], timeout=15, max_output=1000)
        assert (ran.exit_code, ran.output) == (0, b"written over ssh")
    logs = client.get(f"/api/agents/{agent_id}/logs?tail=50")  # the runtime's output, over ssh too
    assert logs.status_code == 200, logs.content
    assert logs.json() and all(set(line) == {"ts", "stream", "line"} for line in logs.json())

    stopped = client.post(f"/api/agents/{agent_id}/stop")
    assert (stopped.status_code, stopped.json()["status"]) == (200, "stopped")
    assert docker_engine.containers.get(agent.container_id).status == "exited"

    started = client.post(f"/api/agents/{agent_id}/start")
    assert (started.status_code, started.json()["status"]) == (200, "running")
    assert docker_engine.containers.get(agent.container_id).status == "running"

    _restart_and_redeploy_over_ssh(client, live, docker_engine, agent, check_file="remote-check.txt")
    agent = Agent.objects.get(pk=agent_id)

    in_use = client.delete(f"/api/remote-hosts/{host['id']}")
    assert (in_use.status_code, in_use.json()["code"]) == (409, "host_in_use")

    assert client.delete(f"/api/agents/{agent_id}").json() == {"success": True}
    assert not docker_engine.containers.list(all=True, ignore_removed=True,
                                             filters={"label": f"fleet.agent_id={agent_id}"})
    assert client.delete(f"/api/remote-hosts/{host['id']}").json() == {"success": True}


def _started_at(docker_engine, container_id) -> str:
    return docker_engine.containers.get(container_id).attrs["State"]["StartedAt"]


def _restart_and_redeploy_over_ssh(client, live, docker_engine, agent, *, check_file: str) -> None:
    """Restart (the same container started again), then stop and redeploy (a new container on
    the host, the agent's state kept), each through the API and seen on the engine."""
    agent_id = str(agent.id)
    before = _started_at(docker_engine, agent.container_id)
    restarted = client.post(f"/api/agents/{agent_id}/restart")
    assert (restarted.status_code, restarted.json()) == (200, {"success": True}), restarted.content
    assert _status(agent_id) == "running"
    container = docker_engine.containers.get(agent.container_id)
    assert container.status == "running" and _started_at(docker_engine, agent.container_id) != before

    assert client.post(f"/api/agents/{agent_id}/stop").json()["status"] == "stopped"
    redeployed = client.post(f"/api/agents/{agent_id}/redeploy")
    assert (redeployed.status_code, redeployed.json()["status"]) == (200, "queued"), redeployed.content
    live.wait_until(lambda: _status(agent_id) in ("running", "error"), timeout=60)
    replaced = Agent.objects.get(pk=agent_id)
    assert replaced.status == "running", replaced.last_error
    assert replaced.container_id != agent.container_id
    assert docker_engine.containers.get(replaced.container_id).status == "running"
    assert not docker_engine.containers.list(all=True, ignore_removed=True,
                                             filters={"id": agent.container_id})  # the old one is gone
    assert backend_for(replaced).read_state_file(replaced, check_file) == b"written over ssh"  # state kept


def test_a_hermes_agent_lives_on_a_host_reached_with_a_password(live, sshd, docker_socket_path, docker_engine):
    client = client_for(UserFactory())
    body = host_body(sshd, docker_socket_path, auth={"type": "password", "password": sshd.password})
    host = client.post("/api/remote-hosts", body, format="json").json()
    assert host["auth"] == {"type": "password", "privateKey": None, "passphrase": None, "password": "[REDACTED]"}
    tested = client.post(f"/api/remote-hosts/{host['id']}/test").json()
    assert tested["ok"] is True and tested["hostKeyFingerprint"] == sshd.fingerprint

    response = client.post("/api/agents/deploy", {"runtime_family": "hermes",
                                                  "execution_target_id": f"remote:{host['id']}"}, format="json")
    assert response.status_code == 201, response.content
    agent_id = response.json()["id"]
    live.wait_until(lambda: _status(agent_id) in ("running", "error"), timeout=60)
    agent = Agent.objects.get(pk=agent_id)
    assert agent.status == "running", agent.last_error
    assert agent.runtime_version == "0.19.0"
    assert docker_engine.containers.get(agent.container_id).labels["fleet.agent_id"] == agent_id
    stats = client.get(f"/api/agents/{agent_id}/stats")
    assert stats.status_code == 200 and stats.json()["running"] is True
    backend_for(agent).write_state_file(agent, "password-check.txt", b"written over ssh")

    _restart_and_redeploy_over_ssh(client, live, docker_engine, agent, check_file="password-check.txt")

    assert client.delete(f"/api/agents/{agent_id}").json() == {"success": True}
    assert not docker_engine.containers.list(all=True, ignore_removed=True,
                                             filters={"label": f"fleet.agent_id={agent_id}"})
    assert client.delete(f"/api/remote-hosts/{host['id']}").json() == {"success": True}


def test_an_unreachable_host_is_502_on_requests_and_error_in_provisioning(remote_settings, docker_settings,
                                                                          celery_worker_live, docker_socket_path):
    docker_settings.AGENT_PROVISION_MAX_RETRIES = 1
    docker_settings.AGENT_PROVISION_RETRY_BACKOFF_SECONDS = 0.1
    owner = UserFactory()
    client = client_for(owner)
    server = SshServer.start(docker_socket_path)
    try:
        host = _ready_host(client, server, docker_socket_path)
    finally:
        server.close()  # the host goes away after its test passed
    target = f"remote:{host['id']}"
    placed = Agent.objects.create(name="placed", owner=owner, status="running", deploy_target="remote-docker",
                                  execution_target_id=target, container_id="f" * 64, gateway_host_port=19999)

    for call in (client.get(f"/api/agents/{placed.id}/stats"), client.post(f"/api/agents/{placed.id}/stop")):
        assert (call.status_code, call.json()["code"]) == (502, "daemon_unreachable")

    deployed = client.post("/api/agents/deploy", {"deploy_target": "remote-docker", "execution_target_id": target},
                           format="json").json()["id"]
    celery_worker_live.wait_until(lambda: _status(deployed) == "error", timeout=60)
    reason = Agent.objects.get(pk=deployed).last_error
    assert "could not be reached" in reason and f"127.0.0.1:{host['port']} cannot be reached" in reason
