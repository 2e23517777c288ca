"""agents.stats.sampler.collect: concurrent, bounded engine calls that a slow or failing host
cannot hold up. The stats source is a plain function (the engine is not what is tested)."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

from agents.backends.base import BackendError, BackendUnreachable
from agents.stats.sampler import Limits, collect
from tests.agents.stats.workloads import fleet, lane_of, snapshot


@pytest.fixture
def released():
    """An event that hung calls wait on; set at teardown so their threads end."""
    event = threading.Event()
    yield event
    event.set()


def test_every_agent_is_asked_once_and_its_snapshot_kept():
    agents = fleet(docker=40, remote=10)
    asked = Counter()
    lock = threading.Lock()

    def source(agent):
        with lock:
            asked[agent.pk] += 1
        return snapshot(agent.pk)

    result = collect(agents, source=source, lane_of=lane_of)

    assert set(result.snapshots) == {a.pk for a in agents}
    assert result.snapshots[7].cpu_percent == 7
    assert set(asked.values()) == {1}
    assert not (result.failed or result.timed_out or result.skipped)


def test_calls_run_concurrently_within_the_lane_and_pool_bounds():
    agents = fleet(a=30, b=30, c=30)
    limits = Limits(max_workers=5, per_lane=2)
    in_flight, peak_lane, peak_total = Counter(), Counter(), [0]
    lock = threading.Lock()

    def source(agent):
        with lock:
            in_flight[agent.lane] += 1
            peak_lane[agent.lane] = max(peak_lane[agent.lane], in_flight[agent.lane])
            peak_total[0] = max(peak_total[0], sum(in_flight.values()))
        time.sleep(0.01)
        with lock:
            in_flight[agent.lane] -= 1
        return snapshot()

    result = collect(agents, source=source, lane_of=lane_of, limits=limits)

    assert len(result.snapshots) == 90
    assert max(peak_lane.values()) == 2
    assert 2 < peak_total[0] <= 5


def test_a_failing_agent_is_reported_and_the_others_are_kept():
    agents = fleet(docker=10)

    def source(agent):
        if agent.pk == 3:
            raise BackendError("the engine refused")
        return snapshot()

    result = collect(agents, source=source, lane_of=lane_of)

    assert result.failed == {3: "BackendError"}
    assert set(result.snapshots) == set(range(10)) - {3}


def test_an_unreachable_engine_closes_its_lane_and_spares_the_others():
    agents = fleet(down=20, docker=20)
    asked_down = []

    def source(agent):
        if agent.lane == "down":
            asked_down.append(agent.pk)
            raise BackendUnreachable("connection refused")
        return snapshot()

    result = collect(agents, source=source, lane_of=lane_of, limits=Limits(per_lane=2))

    assert {a.pk for a in agents if a.lane == "docker"} == set(result.snapshots)
    assert result.closed_lanes == {"down"}
    assert len(asked_down) <= 2  # the lane closed after its first answer(s), not 20 calls
    assert len(result.failed) + len(result.skipped) == 20


def test_a_slow_call_is_abandoned_after_the_call_timeout(released):
    agents = fleet(docker=10)

    def source(agent):
        if agent.pk == 0:
            released.wait(10)
        return snapshot()

    started = time.monotonic()
    result = collect(agents, source=source, lane_of=lane_of, limits=Limits(call_timeout=0.5))

    assert time.monotonic() - started < 2.5
    assert result.timed_out == [0]
    assert set(result.snapshots) == set(range(1, 10))


def test_a_hung_host_does_not_hold_up_the_other_hosts(released):
    agents = fleet(hung=50, docker=50)

    def source(agent):
        if agent.lane == "hung":
            released.wait(10)
        time.sleep(0.005)
        return snapshot()

    # A call timeout far above a healthy call's 5 ms even on a loaded machine (0.2 s was not).
    limits = Limits(max_workers=8, per_lane=3, call_timeout=1.0, lane_strikes=2, budget=8)
    started = time.monotonic()
    result = collect(agents, source=source, lane_of=lane_of, limits=limits)

    assert time.monotonic() - started < 4  # the hung host's first calls time out once, then it is skipped
    assert {a.pk for a in agents if a.lane == "docker"} == set(result.snapshots)
    assert "hung" in result.closed_lanes
    assert 2 <= len(result.timed_out) <= 6  # its first calls, not all fifty
    assert len(result.timed_out) + len(result.skipped) == 50


def test_the_budget_ends_a_collection_that_cannot_finish(released):
    agents = fleet(docker=20)

    def source(agent):
        released.wait(10)
        return snapshot()

    limits = Limits(max_workers=4, per_lane=4, call_timeout=5, budget=0.3)
    started = time.monotonic()
    result = collect(agents, source=source, lane_of=lane_of, limits=limits)

    assert time.monotonic() - started < 1.5
    assert not result.snapshots
    assert len(result.timed_out) == 4
    assert len(result.skipped) == 16


def test_an_unexpected_error_in_a_source_is_reported_not_raised():
    def source(agent):
        raise RuntimeError("a bug in one backend")

    result = collect(fleet(docker=3), source=source, lane_of=lane_of)

    assert result.failed == {0: "RuntimeError", 1: "RuntimeError", 2: "RuntimeError"}
