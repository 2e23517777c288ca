"""Stand-in agents for the sampler's collection tests: a pk and the lane (engine) it is read on."""

from __future__ import annotations

from dataclasses import dataclass

from agents.backends.base import StatsSnapshot


@dataclass(frozen=True)
class Workload:
    pk: int
    lane: str


def snapshot(value: float = 1.0) -> StatsSnapshot:
    return StatsSnapshot(value, value, 512.0, value, 0.0, 0.0, 0.0, 0.0, 3, 10.0, True)


def fleet(**lanes: int) -> list[Workload]:
    """`count` workloads on each lane, numbered from 0 across lanes."""
    agents: list[Workload] = []
    for lane, count in lanes.items():
        agents += [Workload(len(agents) + n, lane) for n in range(count)]
    return agents


def lane_of(agent: Workload) -> str:
    return agent.lane
