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
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import aiohttp

from agents.backends import docker_stats
from agents.backends.base import LABEL_AGENT_ID, BackendError, BackendUnreachable, StatsSnapshot, WorkloadMissing
from agents.backends.docker_async import engine_session

StatsRead = Callable[[object], Awaitable[StatsSnapshot]]
GONE = "The agent's container no longer exists on the Docker engine."


@asynccontextmanager
async def engine_stats_reader(host: str, *, connections: int) -> AsyncIterator[StatsRead]:
    """`read(agent) -> StatsSnapshot` on the engine at `host`, at most `connections` requests
    at once on it; the session ends with the block."""
    async with engine_session(host, connections=connections) as (base, session):
        yield _EngineStats(host, base, session).read


class _EngineStats:
    def __init__(self, host: str, base: str, session: aiohttp.ClientSession):
        self.host, self.base, self.session = host, base, session

    async def read(self, agent) -> StatsSnapshot:
        attrs = await self._container(agent)
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
        return await self._get(f"/containers/{container_id}/stats", {"stream": "false", "one-shot": "true"})

    async def _container(self, agent) -> dict:
        """The agent's container (inspected): by the recorded id, else by its label."""
        if agent.container_id:
            try:
                return await self._get(f"/containers/{agent.container_id}/json")
            except WorkloadMissing:
                pass
        filters = json.dumps({"label": [f"{LABEL_AGENT_ID}={agent.id}"]})
        found = await self._get("/containers/json", {"all": "true", "filters": filters})
        if not found:
            raise WorkloadMissing(GONE)
        return await self._get(f"/containers/{found[0]['Id']}/json")

    async def _get(self, path: str, params: dict | None = None):
        """The JSON answer of a GET; the backend's errors as engine_errors gives them."""
        try:
            async with self.session.get(self.base + path, params=params) as response:
                status, text = response.status, await response.text()
        except (aiohttp.ClientError, OSError) as exc:
            raise BackendUnreachable(f"The Docker engine at {self.host} cannot be reached: {exc}") from exc
        if status == 404:
            raise WorkloadMissing(GONE)
        if status >= 400:
            try:
                message = json.loads(text).get("message") or text
            except (ValueError, AttributeError):
                message = text
            error = BackendError(f"The Docker engine refused the request: {str(message)[:300]}")
            error.transient = status >= 500
            raise error
        return json.loads(text)
