"""One tick's engine reads: each lane's backend resolved once (not once per agent: a registered
host's backend is a database lookup), then the lanes whose engine can be read on the event loop
(WorkloadStatsReader) read there, and the others in the threads of agents.stats.sampler, both
at once, within the same budget."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AsyncExitStack

from agents.backends.base import BackendError, WorkloadStatsReader
from agents.backends.engine import backend_of

from .sampler import Collection, Limits, collect
from .sampler_async import collect_async


def collect_from_backends(agents: list, *, lane_of: Callable[[object], str], limits: Limits) -> Collection:
    result = Collection()
    backends = {}
    for agent in agents:
        lane = lane_of(agent)
        if lane in backends or lane in result.closed_lanes:
            continue
        try:
            backends[lane] = backend_of(agent)
        except BackendError:
            result.closed_lanes.add(lane)  # no backend serves it any more: its agents fail below
    readers = {lane: backend.stats_reader(connections=limits.per_lane_async)
               for lane, backend in backends.items() if isinstance(backend, WorkloadStatsReader)}
    readers = {lane: reader for lane, reader in readers.items() if reader is not None}
    threaded, evented = [], []
    for agent in agents:
        lane = lane_of(agent)
        if lane not in backends:
            result.failed[agent.pk] = "NoBackend"
        else:
            (evented if lane in readers else threaded).append(agent)

    def source(agent):
        return backends[lane_of(agent)].stats(agent)

    async def both() -> list[Collection]:
        async with AsyncExitStack() as stack:
            read_of = {lane: await stack.enter_async_context(reader) for lane, reader in readers.items()}
            parts = [collect_async(evented, read_of=read_of, lane_of=lane_of, limits=limits)]
            if threaded:
                parts.append(asyncio.to_thread(collect, threaded, source=source, lane_of=lane_of, limits=limits))
            return await asyncio.gather(*parts)

    for part in asyncio.run(both()):
        result.snapshots.update(part.snapshots)
        result.failed.update(part.failed)
        result.timed_out.extend(part.timed_out)
        result.skipped.extend(part.skipped)
        result.closed_lanes |= part.closed_lanes
    return result
