"""One stats sampler tick for 1,000 agents, the engine calls replaced by a source that
answers at once, so the figures are the control plane's own cost (DESIGN.md section 9:
at most 0.5 s and a constant number of queries per tick)."""

from __future__ import annotations

import time

from django.db import connection
from django.test.utils import CaptureQueriesContext

from bench import measure, report

AGENTS = 1000
TICKS = 20


def _fleet(count: int) -> None:
    from accounts.models import User
    from agents.models import Agent

    owner = User.objects.create(email="bench-sampler@example.com")
    Agent.objects.bulk_create(
        Agent(
            name=f"bench-{n}",
            owner=owner,
            status="running" if n % 10 else "warning",
            execution_target_id="docker" if n % 4 else f"remote:host-{n % 3}",
            container_id=f"{n:064x}",
        )
        for n in range(count)
    )


def _instant(agent):
    from agents.backends.base import StatsSnapshot

    return StatsSnapshot(12.5, 256.0, 1024.0, 25.0, 10.0, 5.0, 1.0, 2.0, 17, 3600.0, True)


def main() -> None:
    from agents.stats.sampler import collect
    from agents.stats.services import stats_sample_tick

    _fleet(AGENTS)

    with CaptureQueriesContext(connection) as captured:
        first = stats_sample_tick(source=_instant)
    assert first.stored == AGENTS, first
    queries = [q["sql"].split(" ", 1)[0] for q in captured]

    timing = measure(lambda: stats_sample_tick(source=_instant), repeat=TICKS, warmup=2)
    report(
        f"sampler tick, {AGENTS} agents, instant source",
        median_ms=timing.median_ms,
        p95_ms=timing.p95_ms,
        queries_per_tick=len(queries),
        statements=" ".join(queries),
    )

    from agents.models import Agent

    agents = list(Agent.objects.all())
    started = time.perf_counter()
    for _ in range(TICKS):
        collect(agents, source=_instant, lane_of=lambda a: a.execution_target_id)
    report("  of which the concurrent collection alone", median_ms=(time.perf_counter() - started) / TICKS * 1000)

    def slow(agent):
        time.sleep(0.02)  # a 20 ms engine round trip
        return _instant(agent)

    timing = measure(lambda: stats_sample_tick(source=slow), repeat=3, warmup=0)
    report(f"sampler tick, {AGENTS} agents, 20 ms per engine call", median_ms=timing.median_ms)
