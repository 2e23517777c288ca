"""Live stats from the real engine."""

from __future__ import annotations

import pytest

from agents.backends.docker import DockerBackend
from tests.agents.backends.support import FakeAgent, answers_health, spec_for, wait_until

pytestmark = pytest.mark.usefixtures("docker_settings")


@pytest.fixture
def backend() -> DockerBackend:
    return DockerBackend()


@pytest.fixture
def deployed(backend):
    agent = FakeAgent()
    agent.place(backend.create(agent, spec_for(agent, ram_mb=256)))
    wait_until(lambda: answers_health(agent.gateway_host_port))
    return agent


def test_stats_of_a_running_container_show_its_limit_processes_and_uptime(backend, deployed):
    snapshot = backend.stats(deployed)

    assert snapshot.running is True
    assert snapshot.memory_limit_mb == 256.0
    assert 0 < snapshot.memory_usage_mb < 64
    assert snapshot.memory_percent == pytest.approx(snapshot.memory_usage_mb / 256 * 100)
    assert snapshot.pids >= 2  # the entry point's shell and httpd
    assert 0 < snapshot.uptime_seconds < 60
    assert snapshot.cpu_percent >= 0
    assert (snapshot.network_rx_mb, snapshot.network_tx_mb) == (0.0, 0.0)  # host network: no interfaces


def test_memory_the_runtime_allocates_shows_in_its_stats(backend, docker_engine, deployed):
    before = backend.stats(deployed).memory_usage_mb
    docker_engine.containers.get(deployed.container_id).exec_run(["allocate", "64"], detach=True)

    after = wait_until(lambda: (m := backend.stats(deployed).memory_usage_mb) >= before + 60 and m, timeout=20)
    assert after < 256
    assert backend.stats(deployed).pids >= 4  # plus the allocating shell and its sleep


def test_stats_of_a_stopped_container_say_not_running_with_the_limit_kept(backend, deployed):
    backend.stop(deployed)
    snapshot = backend.stats(deployed)

    assert snapshot.running is False
    assert snapshot.memory_limit_mb == 256.0
    assert (snapshot.uptime_seconds, snapshot.cpu_percent, snapshot.pids) == (0.0, 0.0, 0)
