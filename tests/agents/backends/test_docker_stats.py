"""Live stats from the real engine."""

from __future__ import annotations

import asyncio
import statistics
import time

import pytest

from agents.backends.base import WorkloadMissing
from agents.backends.docker import _cpu_samples
from tests.agents.backends.support import FakeAgent, answers_health, spec_for
from tests.support import wait_until

pytestmark = pytest.mark.usefixtures("docker_settings")


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


# -- CPU % from one-shot reads ----------------------------------------------------------------

BUSY_LOOP = ["sh", "-c", "while :; do :; done"]


@pytest.fixture
def fresh_process():
    """This process has no earlier CPU reading of any container, as in a web worker that just
    started, or the sampler's first tick."""
    _cpu_samples.clear()
    yield
    _cpu_samples.clear()


def _median_read_seconds(backend, agent, reads: int = 3) -> float:
    seconds = []
    for _ in range(reads):
        started = time.perf_counter()
        backend.stats(agent)
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


@pytest.fixture
def busy(backend, docker_engine):
    """A container capped at a tenth of a CPU running a busy loop. The cap is low so that the loop
    reaches it even while the rest of the suite loads both cores: the figure read is the cap's."""
    agent = FakeAgent()
    agent.place(backend.create(agent, spec_for(agent, ram_mb=256, vcpu=0.1)))
    wait_until(lambda: answers_health(agent.gateway_host_port))
    docker_engine.containers.get(agent.container_id).exec_run(BUSY_LOOP, detach=True)
    time.sleep(0.5)
    return agent


def test_a_busy_container_shows_its_cpu_from_the_first_read_and_the_next(backend, busy, fresh_process):
    # 100 % is one whole CPU, so the cap is 10 %: a figure scaled by the host's cores would be 5 or 20.
    first = backend.stats(busy).cpu_percent  # no earlier reading: a second read gives the delta
    assert 7 < first < 13
    time.sleep(1)
    second = backend.stats(busy).cpu_percent  # against the reading the first call kept
    assert 7 < second < 13


def test_an_idle_container_shows_next_to_no_cpu(backend, deployed, fresh_process):
    backend.stats(deployed)
    time.sleep(1)
    assert backend.stats(deployed).cpu_percent < 5


def test_a_read_after_the_first_takes_one_engine_answer_not_two_samples(
    backend, docker_engine, deployed, fresh_process
):
    backend.stats(deployed)
    major = int(docker_engine.version()["Version"].split(".")[0])
    # Engines since 25.0 answer a one-shot read at once. Older ones answer it at their stats
    # collector's next tick (every second), where a two-sample read waits for two (up to 2 s).
    limit = 0.5 if major >= 25 else 1.3
    assert _median_read_seconds(backend, deployed) < limit


def test_the_cpu_of_a_stopped_and_restarted_container_starts_afresh(backend, docker_engine, deployed, fresh_process):
    backend.stats(deployed)
    backend.restart(deployed)
    wait_until(lambda: answers_health(deployed.gateway_host_port))
    # The new start counts from zero: readings of the earlier run are not used, a fresh pair is.
    snapshot = backend.stats(deployed)
    assert 0 <= snapshot.cpu_percent < 50
    assert snapshot.uptime_seconds < 30


# -- the same reads on the event loop (the sampler's path) --------------------------------------


def _read_on_the_loop(backend, agent):
    async def read():
        async with backend.stats_reader(connections=4) as read_stats:
            return await read_stats(agent)

    return asyncio.run(read())


def test_stats_read_on_the_event_loop_match_the_blocking_read(backend, deployed):
    blocking = backend.stats(deployed)
    on_the_loop = _read_on_the_loop(backend, deployed)

    assert on_the_loop.running is True
    assert on_the_loop.memory_limit_mb == blocking.memory_limit_mb == 256.0
    assert 0 < on_the_loop.memory_usage_mb < 64
    assert on_the_loop.pids >= 2
    assert 0 < on_the_loop.uptime_seconds < 60
    assert on_the_loop.cpu_percent >= 0


def test_the_event_loop_read_finds_a_container_by_its_label_and_says_when_it_is_gone(backend, deployed):
    unrecorded = FakeAgent(id=deployed.id)  # a job that died before recording the container's id
    assert _read_on_the_loop(backend, unrecorded).running is True

    backend.remove(deployed)
    with pytest.raises(WorkloadMissing):
        _read_on_the_loop(backend, deployed)


def test_the_event_loop_read_of_a_busy_container_gives_its_cpu_first_and_next(backend, busy, fresh_process):
    assert 7 < _read_on_the_loop(backend, busy).cpu_percent < 13  # no earlier reading: two reads
    time.sleep(1)
    assert 7 < _read_on_the_loop(backend, busy).cpu_percent < 13  # against the kept reading
