"""The gateway listener's supervisor: one event loop holding this shard's agents' connections.

Every `refresh_seconds` it reads which agents this shard must hold (selection.wanted_agents),
starts a link for each new one, stops the links of agents no longer wanted, and replaces a link
whose scopes or caps changed. Everything that touches the database or the cache runs in a small
pool of worker threads, so the loop never waits on a query and the process holds at most
`db_threads` database connections however many agents it holds. SIGTERM or SIGINT stops it:
every connection is closed and run() returns.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from dataclasses import dataclass

from django.conf import settings

from ..connection import OPEN_TIMEOUT
from .backoff import Backoff
from .dispatch import db_job
from .link import AgentLink
from .lookups import GatewayLookups
from .selection import wanted_agents
from .sharding import Shard
from .threads import DbThreads

logger = logging.getLogger(__name__)

DB_THREADS = 4
# Handshakes in flight per shard: enough to keep a runtime-side round trip of a few ms busy
# (2,500 agents in a few seconds), few enough that none waits past the open timeout.
HANDSHAKES = 64
CLOSE_TIMEOUT = 10.0  # how long stopping waits for a hook that is still running
ONCE_TIMEOUT = OPEN_TIMEOUT + 10  # the handshake's own bound plus resolving the endpoint


@dataclass(frozen=True)
class CycleReport:
    """What one refresh cycle found (`manage.py gateway_listener --once`)."""

    wanted: int
    connected: int
    failed: dict[str, str]  # agent id -> why it could not be held


class Supervisor:
    def __init__(self, *, shard: Shard | None = None, refresh_seconds: float | None = None,
                 backoff: Backoff | None = None, db_threads: int = DB_THREADS, handshakes: int = HANDSHAKES):
        self.shard = shard or Shard.from_settings()
        self.refresh_seconds = float(settings.GATEWAY_LISTENER_REFRESH_SECONDS
                                     if refresh_seconds is None else refresh_seconds)
        if self.refresh_seconds <= 0:
            raise ValueError(f"The listener's refresh interval must be positive, not {self.refresh_seconds:g} s.")
        self.backoff = backoff or Backoff()
        self.links: dict[str, AgentLink] = {}
        self._pool = DbThreads(db_threads, name="gateway-listener-db")
        self._lookups = GatewayLookups(self.run_db)
        self._handshakes = asyncio.Semaphore(handshakes)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._stop_requested = threading.Event()  # a stop that arrives before run() has a loop

    # -- running -------------------------------------------------------------------------------
    async def run(self, *, handle_signals: bool = True) -> None:
        """Refresh every `refresh_seconds` until stop() (or SIGTERM/SIGINT), then close all."""
        self._loop, self._stopping = asyncio.get_running_loop(), asyncio.Event()
        if self._stop_requested.is_set():  # checked after _loop is set: stop_threadsafe() reads it in that order
            self._stopping.set()
        signals = (signal.SIGTERM, signal.SIGINT) if handle_signals else ()
        for signum in signals:
            self._loop.add_signal_handler(signum, self.stop)
        logger.info("Gateway listener shard %s started (refresh every %g s)", self.shard, self.refresh_seconds)
        try:
            while not self._stopping.is_set():
                try:
                    await self.refresh()
                except Exception:  # the database is away: keep what is held, try again next time
                    logger.exception("Gateway listener shard %s could not refresh; keeping %d connections",
                                     self.shard, len(self.links))
                try:
                    await asyncio.wait_for(self._stopping.wait(), self.refresh_seconds)
                except TimeoutError:
                    pass
        finally:
            for signum in signals:
                self._loop.remove_signal_handler(signum)
            await self.close()
        logger.info("Gateway listener shard %s stopped", self.shard)

    async def run_once(self, *, timeout: float = ONCE_TIMEOUT) -> CycleReport:
        """One refresh, one connection attempt per wanted agent, then close everything."""
        try:
            await self.refresh()
            links = list(self.links.values())
            if links:
                await asyncio.wait([asyncio.ensure_future(link.tried.wait()) for link in links], timeout=timeout)
            return CycleReport(
                wanted=len(links),
                connected=sum(link.connected for link in links),
                failed={link.agent_id: link.last_error or "no answer in time" for link in links if not link.connected},
            )
        finally:
            await self.close()

    def stop(self) -> None:
        """Ask run() to end (from the loop's thread: a signal handler)."""
        self._stop_requested.set()
        if self._stopping is not None:
            self._stopping.set()

    def stop_threadsafe(self) -> None:
        """Ask run() to end from another thread, whether or not it has started yet."""
        self._stop_requested.set()
        if self._loop is not None:
            try:
                self._loop.call_soon_threadsafe(self.stop)
            except RuntimeError:  # the loop is closed: run() has already ended
                pass

    async def close(self) -> None:
        await self._drop(list(self.links))
        # Queued work is dropped; a running hook may finish; then each thread closes its database connection.
        await asyncio.to_thread(self._pool.shutdown, wait=True, cancel_futures=True, timeout=CLOSE_TIMEOUT)

    # -- one refresh ---------------------------------------------------------------------------
    async def refresh(self) -> None:
        wanted = await self.run_db(wanted_agents, self.shard)
        gone = [agent_id for agent_id in self.links if agent_id not in wanted]
        regranted = [agent_id for agent_id, link in self.links.items()
                     if agent_id in wanted and link.need.grant != wanted[agent_id].grant]
        await self._drop(gone + regranted)  # a different grant needs a new handshake
        started = 0
        for agent_id, need in wanted.items():
            link = self.links.get(agent_id)
            if link is not None:
                link.need = need  # the same grant; the hooks to call may differ
                continue
            link = self.links[agent_id] = AgentLink(agent_id, need, run_db=self.run_db, backoff=self.backoff,
                                                    lookups=self._lookups, handshakes=self._handshakes)
            link.start()
            started += 1
        if started or gone:
            logger.info("Gateway listener shard %s holds %d agents (+%d, -%d)",
                        self.shard, len(self.links), started - len(regranted), len(gone))

    async def _drop(self, agent_ids: list[str]) -> None:
        links = [self.links.pop(agent_id) for agent_id in agent_ids]
        await asyncio.gather(*(link.stop() for link in links))

    async def run_db(self, fn, *args):
        """`fn(*args)` in a worker thread (database, cache: anything that blocks)."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, db_job, fn, args)
