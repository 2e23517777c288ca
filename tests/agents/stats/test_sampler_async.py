"""agents.stats.sampler_async.collect_async: many reads in flight per engine on the event loop,
bounded per engine, a slow or dead engine never holding up the others, nothing outliving the
budget. The reads are plain coroutines (the engine is not what is tested)."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

from agents.backends.base import BackendError, BackendUnreachable
from agents.stats.sampler import Limits
from agents.stats.sampler_async import collect_async
from tests.agents.stats.workloads import fleet, lane_of, snapshot


def run(agents, reads, limits=Limits()):  # noqa: B008 - a frozen dataclass
    return asyncio.run(collect_async(agents, read_of=reads, lane_of=lane_of, limits=limits))


def test_every_agent_is_read_once_and_its_snapshot_kept():
    asked = Counter()

    async def read(agent):
        asked[agent.pk] += 1
        return snapshot(agent.pk)

    result = run(fleet(a=50, b=20), {"a": read, "b": read})

    assert set(result.snapshots) == set(range(70))
    assert result.snapshots[9].cpu_percent == 9
    assert set(asked.values()) == {1}
    assert not (result.failed or result.timed_out or result.skipped)


def test_reads_in_flight_per_engine_stay_within_the_bound_and_run_together():
    in_flight, peak = Counter(), Counter()

    async def read(agent):
        in_flight[agent.lane] += 1
        peak[agent.lane] = max(peak[agent.lane], in_flight[agent.lane])
        await asyncio.sleep(0.05)  # an engine answering at its collector's tick
        in_flight[agent.lane] -= 1
        return snapshot()

    started = time.monotonic()
    result = run(fleet(a=120, b=120), {"a": read, "b": read}, Limits(per_lane_async=30))

    assert len(result.snapshots) == 240
    assert peak == {"a": 30, "b": 30}
    assert time.monotonic() - started < 2  # 4 rounds of 50 ms, not 240 reads one after another


def test_a_hung_engine_does_not_hold_up_the_others_and_its_lane_closes():
    async def hung(agent):
        await asyncio.sleep(60)

    async def quick(agent):
        await asyncio.sleep(0.001)
        return snapshot()

    limits = Limits(per_lane_async=5, call_timeout=0.3, lane_strikes=2, budget=8)
    started = time.monotonic()
    result = run(fleet(hung=100, docker=100), {"hung": hung, "docker": quick}, limits)

    assert time.monotonic() - started < 2  # its first reads time out once, then the lane is closed
    assert {a.pk for a in fleet(hung=100, docker=100) if a.lane == "docker"} == set(result.snapshots)
    assert result.closed_lanes == {"hung"}
    assert 2 <= len(result.timed_out) <= 5  # the reads that were in flight, not all hundred
    assert len(result.timed_out) + len(result.skipped) == 100


def test_an_unreachable_engine_closes_its_lane_at_its_first_answer():
    asked = []

    async def down(agent):
        asked.append(agent.pk)
        raise BackendUnreachable("connection refused")

    async def quick(agent):
        return snapshot()

    result = run(fleet(down=50, docker=10), {"down": down, "docker": quick}, Limits(per_lane_async=4))

    assert len(result.snapshots) == 10
    assert result.closed_lanes == {"down"}
    assert len(asked) <= 4
    assert len(result.failed) + len(result.skipped) == 50


def test_the_budget_cancels_what_is_still_running_and_skips_what_never_started():
    cancelled = []

    async def slow(agent):
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.append(agent.pk)
            raise

    started = time.monotonic()
    result = run(fleet(a=20), {"a": slow}, Limits(per_lane_async=4, call_timeout=30, budget=0.3))

    assert time.monotonic() - started < 1.5
    assert not result.snapshots
    assert len(result.timed_out) == 4 and sorted(cancelled) == sorted(result.timed_out)  # nothing left running
    assert len(result.skipped) == 16


def test_a_failing_read_is_reported_and_the_others_kept():
    async def read(agent):
        if agent.pk == 3:
            raise BackendError("the engine refused")
        return snapshot()

    result = run(fleet(a=10), {"a": read})

    assert result.failed == {3: "BackendError"}
    assert set(result.snapshots) == set(range(10)) - {3}
