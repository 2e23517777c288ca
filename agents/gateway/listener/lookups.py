"""The links' reads of their agents' gateways, coalesced: one query for many links.

Every link reads its agent's row before each connect (the port may have moved). When thousands
connect at once (a shard's start, a restart of every runtime on a host), one query and one read
of the device key per link queued thousands of jobs behind the worker threads and held their
handshakes back by a minute. Here the lookups asked while a batch is being read wait for the
next one, which reads up to BATCH agents in one query (selection.agent_gateways); a lone
reconnect is still one query.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from itertools import islice

from ..openclaw import OpenClawGateway
from .selection import agent_gateways

BATCH = 500  # agents per query: a few milliseconds of the database, a bounded `IN` list

RunDb = Callable[..., Awaitable]


class GatewayLookups:
    def __init__(self, run_db: RunDb, *, batch: int = BATCH):
        self._run_db = run_db
        self._batch = batch
        self._waiting: dict[str, list[asyncio.Future]] = {}
        self._reader: asyncio.Task | None = None

    async def gateway(self, agent_id: str) -> OpenClawGateway:
        """The agent's gateway now; its error (AgentNotRunning, ...) raised here."""
        future = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(agent_id, []).append(future)
        if self._reader is None or self._reader.done():
            self._reader = asyncio.create_task(self._read(), name="gateway-listener-lookups")
        return await future

    async def _read(self) -> None:
        while self._waiting:
            agent_ids = list(islice(self._waiting, self._batch))
            waiters = {agent_id: self._waiting.pop(agent_id) for agent_id in agent_ids}
            try:
                found = await self._run_db(agent_gateways, agent_ids)
            except asyncio.CancelledError:
                _settle(waiters, lambda _: asyncio.CancelledError())
                raise
            except Exception as exc:  # the database is away: every waiting link fails this attempt
                _settle(waiters, lambda _, exc=exc: exc)
                continue
            _settle(waiters, found.get)


def _settle(waiters: dict[str, list[asyncio.Future]], outcome: Callable[[str], object]) -> None:
    for agent_id, futures in waiters.items():
        result = outcome(agent_id)
        for future in futures:
            if future.done():  # its link was stopped meanwhile
                continue
            if isinstance(result, BaseException):
                future.set_exception(result)
            else:
                future.set_result(result)
