"""Collect one stats snapshot per agent on the event loop, for engines read without a thread
(agents.backends.base.WorkloadStatsReader): the same lanes and rules as agents.stats.sampler,
with far more reads in flight per engine, since a read that waits holds no thread.

- a lane (one engine) has at most `per_lane_async` reads in flight;
- a read longer than `call_timeout` is cancelled; `lane_strikes` of them close the lane;
  an unreachable engine closes it at once; a closed lane's remaining agents are skipped;
- at `budget` seconds every read still running is cancelled (timed out) and every agent not
  yet asked is skipped: nothing outlives the tick, no thread is left behind.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Iterable

from agents.backends.base import BackendUnreachable, StatsSnapshot

from .sampler import Collection, Limits

logger = logging.getLogger(__name__)

StatsRead = Callable[[object], Awaitable[StatsSnapshot]]


async def collect_async(
    agents: Iterable,
    *,
    read_of: dict[str, StatsRead],
    lane_of: Callable[[object], str],
    limits: Limits = Limits(),  # noqa: B008 - a frozen dataclass, safe to share as a default
) -> Collection:
    result = Collection()
    agents = list(agents)
    random.shuffle(agents)  # the agents a short budget leaves out differ from tick to tick
    gates = {lane: asyncio.Semaphore(limits.per_lane_async) for lane in read_of}
    strikes = dict.fromkeys(read_of, 0)
    asked: set = set()

    async def one(agent) -> None:
        lane = lane_of(agent)
        async with gates[lane]:
            if lane in result.closed_lanes:
                result.skipped.append(agent.pk)
                return
            asked.add(agent.pk)
            try:
                result.snapshots[agent.pk] = await asyncio.wait_for(read_of[lane](agent), limits.call_timeout)
            except TimeoutError:
                result.timed_out.append(agent.pk)
                strikes[lane] += 1
                if strikes[lane] >= limits.lane_strikes:
                    result.closed_lanes.add(lane)
            except BackendUnreachable as exc:
                result.failed[agent.pk] = type(exc).__name__
                result.closed_lanes.add(lane)
            except Exception as exc:  # one agent's failure never ends the tick
                result.failed[agent.pk] = type(exc).__name__
                logger.warning("stats of agent %s failed: %s", agent.pk, exc)

    tasks = {asyncio.ensure_future(one(agent)): agent for agent in agents}
    if not tasks:
        return result
    _, pending = await asyncio.wait(tasks, timeout=limits.budget)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    for task in pending:
        pk = tasks[task].pk
        (result.timed_out if pk in asked else result.skipped).append(pk)
    return result
