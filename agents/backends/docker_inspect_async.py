"""Containers inspected on the event loop, for the monitoring sweep: an engine's hundreds of
agents looked at without a thread each, over one aiohttp session on the engine's socket.

The same lookups and the same LiveState as DockerBackend.inspect() (docker_state holds the rule).
Only engines reached by a Unix socket or plain TCP are read this way; the others (Remote Docker's
SSH channels) are inspected in threads.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from agents.backends.base import LiveState
from agents.backends.docker_async import engine_session
from agents.backends.docker_reads_async import EngineReads
from agents.backends.docker_state import MISSING, live_state

StateRead = Callable[[object], Awaitable[LiveState]]


@asynccontextmanager
async def engine_inspect_reader(host: str, *, connections: int) -> AsyncIterator[StateRead]:
    """`read(agent) -> LiveState` on the engine at `host`, at most `connections` requests at
    once on it; the session ends with the block."""
    async with engine_session(host, connections=connections) as (base, session):
        yield _EngineInspect(host, base, session).read


class _EngineInspect(EngineReads):
    async def read(self, agent) -> LiveState:
        attrs = await self.container_or_none(agent)
        if attrs is None:
            return MISSING
        return live_state(attrs, node=await self.engine_name())
