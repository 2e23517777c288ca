"""Containers' stats read on the event loop, for the sampler: hundreds of reads in flight on one
engine hold no thread, though each waits on the engine (engines before 25.0 answer a stats read
at their collector's next tick, up to a second later).

The same two calls and the same figures as DockerBackend.stats() (inspect, then one-shot stats
reads; docker_stats does the maths and keeps the CPU readings both share), over an aiohttp
session on the engine's socket (docker_async). Only engines reached by a Unix socket or plain
TCP are read this way; the others (Remote Docker's SSH channels) are read in threads.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from agents.backends import docker_stats
from agents.backends.base import StatsSnapshot
from agents.backends.docker_async import engine_session
from agents.backends.docker_reads_async import EngineReads

StatsRead = Callable[[object], Awaitable[StatsSnapshot]]


@asynccontextmanager
async def engine_stats_reader(host: str, *, connections: int) -> AsyncIterator[StatsRead]:
    """`read(agent) -> StatsSnapshot` on the engine at `host`, at most `connections` requests
    at once on it; the session ends with the block."""
    async with engine_session(host, connections=connections) as (base, session):
        yield _EngineStats(host, base, session).read


class _EngineStats(EngineReads):
    async def read(self, agent) -> StatsSnapshot:
        attrs = await self.container(agent)
        state = attrs.get("State") or {}
        running = bool(state.get("Running"))
        started = state.get("StartedAt") or ""
        cpu = None
        if not running:
            payload = docker_stats.stopped_payload(attrs)
        else:
            payload, cpu = await self._one_shot_stats(attrs["Id"], started)
        return docker_stats.snapshot_from_stats(
            payload, running=running, started_at=docker_stats.parse_docker_time(started), cpu=cpu
        )

    async def _one_shot_stats(self, container_id: str, started: str) -> tuple[dict, float | None]:
        """As DockerBackend._one_shot_stats, the wait between two first reads on the loop."""
        key = docker_stats.reading_key(container_id, started)
        payload = await self._stats(container_id)
        if docker_stats.cpu_sample(payload, key="precpu_stats") is not None:
            return payload, None  # an engine before API 1.41 ignores one-shot: the payload holds its delta
        first, cpu = docker_stats.first_reading(payload, key, at=time.monotonic())
        if first is None or cpu is not None:
            return payload, cpu
        await asyncio.sleep(docker_stats.FIRST_READ_WINDOW)
        payload = await self._stats(container_id)
        return payload, docker_stats.second_reading(first, payload, key, at=time.monotonic())

    async def _stats(self, container_id: str) -> dict:
        return await self.get(f"/containers/{container_id}/stats", {"stream": "false", "one-shot": "true"})
