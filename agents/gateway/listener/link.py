"""One agent's held connection: open it, hand its events on, and when it ends, open it again.

A link lives from the refresh that first wants the agent to the one that no longer does. It
loops: resolve the agent's gateway (the database, in a batch with other links: lookups),
handshake (a bounded number at a time per shard), wait until the connection closes or the
runtime announces `shutdown`, then wait a backoff and start again. A refused token or protocol
waits `Backoff.refused` (an operator must act) and is logged once, not at every attempt; other
failures back off exponentially.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from fleet.errors import FleetError

from ..connection import OpenClawConnection
from ..errors import GatewayAuthRefused, GatewayProtocolError, scrub
from ..hooks import listener_hook
from . import liveness
from .backoff import Backoff
from .dispatch import event_deliver
from .lookups import GatewayLookups
from .selection import Need

logger = logging.getLogger(__name__)

RunDb = Callable[..., Awaitable]


class AgentLink:
    def __init__(self, agent_id: str, need: Need, *, run_db: RunDb, backoff: Backoff, lookups: GatewayLookups,
                 handshakes: asyncio.Semaphore):
        self.agent_id = agent_id
        self.need = need  # the supervisor updates it when other hooks come to want the agent
        self.connection: OpenClawConnection | None = None
        self.connects = 0  # handshakes that succeeded
        self.failures = 0  # consecutive failed attempts or short-lived connections
        self.last_error = ""
        self.tried = asyncio.Event()  # the first attempt is over, whatever its outcome
        self._run_db = run_db
        self._backoff = backoff
        self._lookups = lookups
        self._handshakes = handshakes  # shared by the shard's links: see _hold
        self._shutdown = asyncio.Event()
        self._restart_hint: float | None = None
        self._refusal_logged = False
        self._recorded_at = float("-inf")  # when the last sign of life went to the cache
        self._task: asyncio.Task | None = None

    @property
    def connected(self) -> bool:
        return self.connection is not None and not self.connection.closed

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"gateway-listener-{self.agent_id}")

    async def stop(self) -> None:
        """Close the connection and end the loop (the task's `finally` closes it)."""
        if self._task is None:
            return
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass

    # -- the loop ----------------------------------------------------------------------------
    async def _run(self) -> None:
        while True:
            try:
                delay = await self._hold()
            except Exception as exc:  # a bug while holding: the link must outlive it, or the agent is lost
                logger.exception("The listener's connection to agent %s failed", self.agent_id)
                delay = self._failed(type(exc).__name__)
            await asyncio.sleep(delay)

    async def _hold(self) -> float:
        """One connection from open to end; returns how long to wait before the next."""
        secrets: list[str] = []
        try:
            gateway = await self._lookups.gateway(self.agent_id)
            secrets.append(gateway.endpoint.token)
            connection = gateway.connection(list(self.need.scopes), caps=list(self.need.caps), on_event=self._on_event)
            self._shutdown.clear()
            self._restart_hint = None
            # A bounded number of handshakes at a time per shard: thousands started together
            # would each wait on the others past the open timeout, fail, and all come back
            # together again (a reconnect storm). The timeout counts from the slot.
            async with self._handshakes:
                await connection.open()
        except (GatewayAuthRefused, GatewayProtocolError) as exc:
            return self._refused(scrub(exc, secrets))
        except FleetError as exc:  # unreachable, not running (yet), engine down: transient
            return self._failed(scrub(exc, secrets), getattr(exc, "retry_after", None))

        opened_at = time.monotonic()
        try:
            # The handshake is a sign of life; recorded before anyone may count the link as held.
            await self._run_db(event_deliver, self.agent_id, "hello", {}, ())
            self._recorded_at = time.monotonic()
            self.connection, self.connects, self.last_error = connection, self.connects + 1, ""
            self._refusal_logged = False
            self.tried.set()
            logger.info("Holding agent %s's gateway (scopes %s, caps %s)", self.agent_id,
                        ",".join(self.need.scopes) or "-", ",".join(self.need.caps) or "-")
            await self._until_ended(connection)
        finally:
            await connection.close()  # also when the link is stopped: never leave a socket open
            self.connection = None
        if time.monotonic() - opened_at >= self._backoff.stable:
            self.failures = 0
        why = "the runtime is shutting down" if self._shutdown.is_set() else \
            f"closed {connection.close_code or 'without a code'}"
        return self._failed(why, self._restart_hint, ended=True)

    async def _until_ended(self, connection: OpenClawConnection) -> None:
        closed = asyncio.ensure_future(connection.wait_closed())
        shutdown = asyncio.ensure_future(self._shutdown.wait())
        try:
            await asyncio.wait({closed, shutdown}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            closed.cancel()  # wait_closed shields the reader: cancelling the wait leaves it be
            shutdown.cancel()

    # -- events --------------------------------------------------------------------------------
    async def _on_event(self, frame: dict) -> None:
        event = frame.get("event")
        if not isinstance(event, str):
            return
        payload = frame.get("payload") if isinstance(frame.get("payload"), dict) else {}
        if event == "shutdown":
            # The runtime closes with 1012 right after; close first and come back when it says.
            hint = payload.get("restartExpectedMs")
            self._restart_hint = hint / 1000 if isinstance(hint, (int, float)) and hint >= 0 else None
            self._shutdown.set()
        hooks = tuple(name for name in self.need.hooks if event in getattr(listener_hook(name), "events", ()))
        # With an admin grant a run streams many events a second: only those a hook wants, and a
        # sign of life now and then, are worth a trip to a worker thread.
        now = time.monotonic()
        if not hooks and now - self._recorded_at < liveness.RECORD_EVERY_SECONDS:
            return
        self._recorded_at = now
        # Awaited: the next frame waits for this one's hooks, so each agent's events keep their order.
        await self._run_db(event_deliver, self.agent_id, event, payload, hooks)

    # -- waiting -------------------------------------------------------------------------------
    def _failed(self, why: str, hint: float | None = None, *, ended: bool = False) -> float:
        delay = self._backoff.delay(self.failures)
        if hint is not None:  # the runtime said when to come back: not sooner, never past the cap
            delay = max(delay, min(hint, self._backoff.cap))
        # The first failure of a spell is worth a warning; the retries that follow are not.
        log = logger.warning if self.failures == 0 and not ended else logger.info
        self.failures += 1
        self.last_error = str(why)
        self.tried.set()
        log("Listener connection to agent %s: %s; again in %.1f s", self.agent_id, why, delay)
        return delay

    def _refused(self, why: str) -> float:
        self.failures += 1
        self.last_error = why
        self.tried.set()
        if not self._refusal_logged:  # once per spell: a line every ten minutes per agent says nothing new
            logger.warning("Agent %s's gateway refused the listener: %s. Trying again in %.0f s.",
                           self.agent_id, why, self._backoff.refused)
            self._refusal_logged = True
        return self._backoff.refused
