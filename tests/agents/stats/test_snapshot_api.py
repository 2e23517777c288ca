"""GET /api/agents/:id/stats: one live snapshot from the real Docker engine."""

from __future__ import annotations

import time
import uuid

import pytest

from agents.backends.base import WorkloadSpec
from agents.backends.docker import DockerBackend
from tests.support import wait_until

pytestmark = pytest.mark.django_db

SNAPSHOT_KEYS = {
    "cpu_percent",
    "memory_usage_mb",
    "memory_limit_mb",
    "memory_percent",
    "network_rx_mb",
    "network_tx_mb",
    "disk_read_mb",
    "disk_write_mb",
    "pids",
    "uptime_seconds",
    "running",
}


def url(agent) -> str:
    return f"/api/agents/{agent.pk}/stats"


@pytest.fixture
def containerised(agent, docker_settings, docker_engine):
    """The agent with a real container of the test runtime, limited to 128 MB."""
    spec = WorkloadSpec(
        agent_id=str(agent.pk),
        name=f"fleet-stats-{uuid.uuid4().hex[:12]}",
        runtime_family="openclaw",
        image=docker_settings.AGENT_IMAGE_OPENCLAW,
        env={},
        labels={"fleet.test_case": "stats"},
        vcpu=0.5,
        ram_mb=128,
        disk_gb=1,
    )
    placement = DockerBackend().create(agent, spec)
    agent.container_id, agent.gateway_host_port = placement.container_id, placement.host_port
    agent.save(update_fields=["container_id", "gateway_host_port"])
    return docker_engine.containers.get(placement.container_id)


def snapshot(tenancy, agent, caller="owner") -> dict:
    response = tenancy.client(caller).get(url(agent))
    assert response.status_code == 200, response.json()
    return response.json()


def test_a_running_containers_snapshot_shows_its_real_memory_limit_pids_and_uptime(tenancy, agent, containerised):
    time.sleep(1.2)  # let uptime pass one second

    body = snapshot(tenancy, agent)

    assert set(body) == SNAPSHOT_KEYS
    assert body["running"] is True
    assert body["memory_limit_mb"] == 128.0
    assert 0 < body["memory_usage_mb"] < 128
    assert body["memory_percent"] == pytest.approx(body["memory_usage_mb"] / 128 * 100)
    assert body["pids"] == len(containerised.top()["Processes"])
    assert 1 <= body["uptime_seconds"] < 120
    assert body["cpu_percent"] >= 0
    assert all(body[k] >= 0 for k in ("network_rx_mb", "network_tx_mb", "disk_read_mb", "disk_write_mb"))


def test_a_container_that_allocates_memory_shows_it(tenancy, agent, containerised):
    before = snapshot(tenancy, agent)["memory_usage_mb"]

    # 32 MB: the shell that holds it briefly needs about twice that while reading it in.
    containerised.exec_run(["allocate", "32"], detach=True)
    after = wait_until(
        lambda: (m := snapshot(tenancy, agent)["memory_usage_mb"]) >= before + 30 and m, timeout=30, interval=0.5
    )

    assert before < 16
    assert before + 30 <= after < 64


def test_a_stopped_container_reports_not_running_and_no_uptime(tenancy, agent, containerised):
    containerised.stop(timeout=2)

    body = snapshot(tenancy, agent)

    assert body["running"] is False
    assert body["uptime_seconds"] == 0
    assert body["memory_limit_mb"] == 128.0


def test_a_viewer_and_a_read_key_see_the_snapshot(tenancy, agent, containerised):
    assert snapshot(tenancy, agent, "viewer")["running"] is True
    assert snapshot(tenancy, agent, "key:agents:read")["running"] is True


def test_an_unreachable_engine_is_a_502(tenancy, agent, containerised, settings, tmp_path):
    settings.DOCKER_HOST = f"unix://{tmp_path / 'stopped-engine.sock'}"  # nothing listens there

    response = tenancy.client("owner").get(url(agent))

    assert response.status_code == 502
    assert response.json()["code"] == "daemon_unreachable"


def test_a_container_gone_from_the_engine_is_a_409(tenancy, agent, containerised):
    containerised.remove(force=True)

    response = tenancy.client("owner").get(url(agent))

    assert response.status_code == 409
    assert response.json()["code"] == "no_container"


def test_an_agent_without_a_container_is_a_409(tenancy, agent):
    agent.container_id = ""
    agent.save(update_fields=["container_id"])

    response = tenancy.client("owner").get(url(agent))

    assert response.status_code == 409
    assert response.json() == {"error": response.json()["error"], "code": "no_container"}


@pytest.mark.parametrize(
    "caller, status",
    [
        ("owner", 409),
        ("viewer", 409),
        ("key:agents:read", 409),
        ("outsider", 404),
        ("other-key", 404),
        ("key:workspaces:read", 403),
        ("anonymous", 401),
    ],
)
def test_the_snapshot_is_for_viewers_of_the_agent(tenancy, agent, caller, status):
    # Without a container, a caller who may see the agent gets as far as the 409.
    agent.container_id = ""
    agent.save(update_fields=["container_id"])

    response = tenancy.client(caller).get(url(agent))

    assert response.status_code == status


def test_an_unknown_agent_is_a_404(tenancy):
    response = tenancy.client("owner").get("/api/agents/00000000-0000-0000-0000-000000000000/stats")

    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
