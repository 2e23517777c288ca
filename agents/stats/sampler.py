"""Collect one stats snapshot per agent, concurrently, without letting one host hold up the rest.

Calls go to a thread pool in lanes, one lane per execution target (a Docker engine, a
remote host, a cluster):

- a lane has at most `per_lane` calls in flight, the pool at most `max_workers` threads;
- a call that takes longer than `call_timeout` is abandoned (its answer is ignored) and
  frees its lane slot; its thread still counts against `max_workers` until it returns,
  so hung calls can never pile up beyond the pool;
- a lane whose engine is unreachable, or which has had `lane_strikes` calls time out,
  is closed for the rest of the tick: its remaining agents are skipped, not queued;
- at `budget` seconds the collection ends, whatever is still running or waiting; agents
  are taken in a fresh random order every tick, so none is always the one left out.

Nothing here touches the database; the caller loads the agents and stores the results.
"""

from __future__ import annotations

import logging
import random
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from django.db import connections

from agents.backends.base import BackendUnreachable, StatsSnapshot

logger = logging.getLogger(__name__)

StatsSource = Callable[[object], StatsSnapshot]


@dataclass(frozen=True)
class Limits:
    max_workers: int = 64
    per_lane: int = 10  # docker-py keeps 10 connections per engine; more would be thrown away
    # Reads in flight per engine on the event loop (agents.stats.sampler_async): an engine before
    # 25.0 answers each at its collector's next tick, up to 1 s, so 500 containers need about
    # this many at once to be read well inside a tick; they cost the engine a goroutine each.
    per_lane_async: int = 128
    call_timeout: float = 5.0
    lane_strikes: int = 2
    budget: float = 8.0  # below the 10-second period, so a tick ends before the next is due


@dataclass
class Collection:
    snapshots: dict = field(default_factory=dict)  # agent id -> StatsSnapshot
    failed: dict = field(default_factory=dict)  # agent id -> short reason
    timed_out: list = field(default_factory=list)  # agent ids abandoned after call_timeout
    skipped: list = field(default_factory=list)  # agent ids never called (closed lane, budget)
    closed_lanes: set = field(default_factory=set)


@dataclass
class _Call:
    agent: object
    lane: str
    started: float


def collect(
    agents: Iterable,
    *,
    source: StatsSource,
    lane_of: Callable[[object], str],
    limits: Limits = Limits(),
    clock: Callable[[], float] = time.monotonic,
) -> Collection:
    result = Collection()
    lanes: dict[str, deque] = {}
    agents = list(agents)
    # When a tick cannot reach everyone in its budget, it must not be the same agents every time.
    random.shuffle(agents)
    for agent in agents:
        lanes.setdefault(lane_of(agent), deque()).append(agent)

    running: dict[Future, _Call] = {}
    abandoned: set[Future] = set()  # still occupying a thread
    in_lane: Counter = Counter()
    strikes: Counter = Counter()
    deadline = clock() + limits.budget
    pool = ThreadPoolExecutor(max_workers=limits.max_workers, thread_name_prefix="stats-sampler")
    try:
        while True:
            abandoned = {f for f in abandoned if not f.done()}
            _dispatch(pool, lanes, running, abandoned, in_lane, result.closed_lanes, limits, source, clock)
            if not running and not (abandoned and _waiting(lanes, result.closed_lanes)):
                break
            now = clock()
            if now >= deadline:
                break
            wake = min([deadline, *(c.started + limits.call_timeout for c in running.values())])
            done, _ = wait([*running, *abandoned], timeout=max(wake - now, 0), return_when=FIRST_COMPLETED)
            for future in done:
                call = running.pop(future, None)
                if call is not None:
                    in_lane[call.lane] -= 1
                    _settle(future, call, result)
            now = clock()
            for future, call in list(running.items()):
                if now - call.started >= limits.call_timeout:
                    del running[future]
                    abandoned.add(future)
                    in_lane[call.lane] -= 1
                    result.timed_out.append(call.agent.pk)
                    strikes[call.lane] += 1
                    if strikes[call.lane] >= limits.lane_strikes:
                        result.closed_lanes.add(call.lane)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    result.timed_out.extend(call.agent.pk for call in running.values())
    for queue in lanes.values():
        result.skipped.extend(agent.pk for agent in queue)
    return result


def _dispatch(pool, lanes, running, abandoned, in_lane, closed, limits, source, clock) -> None:
    for lane, queue in lanes.items():
        while queue and lane not in closed and in_lane[lane] < limits.per_lane:
            if len(running) + len(abandoned) >= limits.max_workers:
                return
            agent = queue.popleft()
            running[pool.submit(_call, source, agent)] = _Call(agent, lane, clock())
            in_lane[lane] += 1


def _waiting(lanes, closed) -> bool:
    return any(queue for lane, queue in lanes.items() if lane not in closed)


def _settle(future: Future, call: _Call, result: Collection) -> None:
    error = future.exception()
    if error is None:
        result.snapshots[call.agent.pk] = future.result()
        return
    result.failed[call.agent.pk] = type(error).__name__
    if isinstance(error, BackendUnreachable):
        result.closed_lanes.add(call.lane)
    else:
        logger.warning("stats of agent %s failed: %s", call.agent.pk, error)


def _call(source: StatsSource, agent) -> StatsSnapshot:
    try:
        return source(agent)
    finally:
        # A source that read the database opened a connection owned by this pool thread.
        connections.close_all()
