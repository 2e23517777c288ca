"""OpenClaw's RuntimeGateway: each call is one WebSocket (protocol 4) with the least scopes it needs.

The methods here are sync, for Django code and Celery tasks: each one opens an
OpenClawConnection, does its calls, and closes it, on a private event loop. Refusals the runtime
marks retryable (`UNAVAILABLE` while it starts, a full request queue) and "come back later"
closes are retried with backoff inside the call's budget; auth and protocol refusals never are.
Config reads and writes (idempotent) also outlast a connection refused or dropped while OpenClaw
restarts itself (after a change its answer marks `requiresRestart`, such as a plugin): tried
again until the budget.
Liveness and readiness are plain HTTP (`/health`, `/readyz`), which needs no token.
A long-lived listener uses `connection()` and the async OpenClawConnection directly.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import secrets
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime, timedelta
from typing import TypeVar

from django.db import connections

from . import http
from .base import (
    Approval,
    ChannelState,
    ChatEvent,
    ChatMessage,
    ChatReply,
    ChatSession,
    ChatUsage,
    Handshake,
    Readiness,
    RuntimeGateway,
    Usage,
    UsageRow,
    chat_approval,
    chat_delta,
    chat_done,
    chat_error,
    chat_tool,
    message_text,
)
from .connection import CALL_TIMEOUT, OpenClawConnection
from .device import DeviceIdentity, installation_device
from .endpoint import Endpoint
from .errors import GatewayDropped, GatewayError, GatewayProtocolError, GatewayUnreachable
from .protocol import ADMIN, APPROVALS, READ, WRITE
from .ui_relay import OpenClawUiRelay

logger = logging.getLogger(__name__)

T = TypeVar("T")

ATTEMPTS = 4  # one call and at most three retries of a retryable refusal
BACKOFF_SECONDS = 0.25  # doubles each retry, unless the runtime says how long to wait
MAX_BACKOFF_SECONDS = 5.0
CHAT_TIMEOUT = 120.0
# A streamed turn ends with an error when the runtime says nothing about it (not even a status
# or a tool's output) this long: a dead run, not a slow one.
CHAT_IDLE_SECONDS = 300.0
CHAT_HISTORY_LIMIT = 200  # messages of a conversation read at most (its latest)
USAGE_MAX_DAYS = 92  # one sessions.usage call per day: bound what one pull may ask for
# OpenClaw recomputes its usage cache for a few seconds after a run ("refreshing"); wait that
# long at most, then answer complete=False and let the next pull see the rest.
USAGE_SETTLE_SECONDS = 3.0
STALE_CONFIG_MARKERS = ("config changed since last load", "base hash required")


def _stale_hash(error: GatewayError) -> bool:
    return error.runtime_code == "INVALID_REQUEST" and any(m in str(error) for m in STALE_CONFIG_MARKERS)


def _number(value) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


class OpenClawGateway(RuntimeGateway):
    family = "openclaw"

    def __init__(self, endpoint: Endpoint, device: DeviceIdentity | None = None, *, timeout: float = CALL_TIMEOUT):
        self.endpoint = endpoint
        self.timeout = timeout
        self._device = device

    @property
    def device(self) -> DeviceIdentity:
        """The installation's key, read from the database on first WebSocket use: never for the
        HTTP liveness and readiness checks (run in threads that must not touch the database)."""
        if self._device is None:
            self._device = installation_device()
        return self._device

    def connection(self, scopes: list[str], *, caps: list[str] = (), on_event=None,
                   call_timeout: float | None = None) -> OpenClawConnection:
        """An unopened connection to this agent's gateway, for callers that hold one open. It may be
        made and opened from async code: the device is then read in a worker thread at open()."""
        device = self._device or self._read_device_in_worker  # not read yet: open() reads it in a thread
        return OpenClawConnection(self.endpoint, device, scopes=scopes, caps=caps, on_event=on_event,
                                  call_timeout=call_timeout or self.timeout)

    def _read_device_in_worker(self) -> DeviceIdentity:
        try:
            return self.device
        finally:
            connections.close_all()  # the worker thread's own database connection: leave none open

    # -- the sync door ------------------------------------------------------------------------
    def _session(self, scopes: list[str], work: Callable[[OpenClawConnection], Awaitable[T]], *,
                 call_timeout: float | None = None, through_restart: bool = False) -> T:
        """Open a connection with `scopes`, run `work` on it, close it; retry retryable refusals.
        `through_restart` is for idempotent work: a connection that drops or is refused (OpenClaw
        restarts itself after a change marked `requiresRestart`) is tried again until the gateway's
        timeout has passed since the first attempt."""
        connection_of = lambda: self.connection(scopes, call_timeout=call_timeout)  # noqa: E731

        async def attempts() -> T:
            deadline = time.monotonic() + self.timeout
            for attempt in itertools.count(1):
                try:
                    async with connection_of() as connection:
                        return await work(connection)
                except (GatewayError, GatewayUnreachable) as exc:
                    # A restart is a dropped connection, then a runtime that says "starting".
                    restarting = through_restart and (isinstance(exc, GatewayDropped)
                                                      or getattr(exc, "retryable", False))
                    if restarting:
                        if time.monotonic() >= deadline:
                            raise
                    elif not getattr(exc, "retryable", False) or attempt == ATTEMPTS:
                        raise
                    delay = getattr(exc, "retry_after", None)
                    delay = min(
                        MAX_BACKOFF_SECONDS, delay if delay is not None else BACKOFF_SECONDS * 2 ** (attempt - 1)
                    )
                    if restarting:
                        delay = max(0.0, min(delay, deadline - time.monotonic()))
                    logger.info("Agent %s's gateway asked to retry (%s); again in %.2f s",
                                self.endpoint.agent_id, type(exc).__name__, delay)
                    await asyncio.sleep(delay)
            raise AssertionError("unreachable")  # the loop returns or raises

        self.device  # noqa: B018 - read here, in sync code, not in a thread of the private loop
        return run_sync(attempts())

    def _call(self, scopes: list[str], method: str, params: dict | None = None, *, timeout: float | None = None,
              expect_final: bool = False):
        return self._session(scopes, lambda c: c.call(method, params, timeout=timeout, expect_final=expect_final),
                             call_timeout=timeout)

    # -- reachability --------------------------------------------------------------------------
    def handshake(self) -> Handshake:
        hello = self._session([READ], _hello)
        return Handshake(
            family=self.family,
            version=str((hello.get("server") or {}).get("version") or ""),
            protocol=hello.get("protocol"),
            scopes=tuple((hello.get("auth") or {}).get("scopes") or ()),
        )

    def health(self) -> dict:
        # Liveness is the 2xx; a runtime behind a proxy may answer it in plain text.
        _, body, _ = http.request(self.endpoint, "GET", self.endpoint.family.health_path, authenticated=False,
                                  timeout=self.timeout, json_required=False)
        return body

    ready_authenticated = False  # /readyz needs no token
    ready_ok_statuses = (503,)  # not ready, with the failing checks

    def ready(self) -> Readiness:
        status, body, _ = http.request(self.endpoint, "GET", self.endpoint.family.ready_path,
                                       authenticated=self.ready_authenticated, timeout=self.timeout,
                                       ok_statuses=self.ready_ok_statuses)
        return self.readiness_of(status, body)

    @staticmethod
    def readiness_of(status: int, body: dict) -> Readiness:
        failing = tuple(str(item) for item in body.get("failing") or ())
        return Readiness(ready=status == 200 and bool(body.get("ready")), failing=failing, detail=body)

    # -- channels ------------------------------------------------------------------------------
    def channels_status(self) -> list[ChannelState]:
        payload = self._call([READ], "channels.status") or {}
        issues = [i for i in payload.get("statusIssues") or [] if isinstance(i, dict)]
        states = []
        for channel, state in (payload.get("channels") or {}).items():
            state = state if isinstance(state, dict) else {}
            states.append(ChannelState(
                channel=channel,
                configured=bool(state.get("configured")),
                running=bool(state.get("running")),
                connected=bool(state.get("connected")),
                linked=state.get("linked") if isinstance(state.get("linked"), bool) else None,
                error=str(state.get("lastError") or ""),
                issues=tuple({k: issue.get(k) for k in ("kind", "message", "fix")}
                             for issue in issues if issue.get("channel") == channel),
            ))
        return states

    def login_start(self, channel: str, *, account_id: str | None = None, force: bool = False,
                    timeout_ms: int | None = None) -> dict:
        params = _present(
            {"channel": channel, "accountId": account_id, "force": force or None, "timeoutMs": timeout_ms}
        )
        payload = self._call([ADMIN], "web.login.start", params, timeout=self._wait_budget(timeout_ms)) or {}
        return {"qr_data_url": payload.get("qrDataUrl"), "message": str(payload.get("message") or "")}

    def login_wait(self, channel: str, *, timeout_ms: int | None = None, current_qr: str | None = None,
                   account_id: str | None = None) -> dict:
        params = _present({"channel": channel, "timeoutMs": timeout_ms, "currentQrDataUrl": current_qr,
                           "accountId": account_id})
        payload = self._call([ADMIN], "web.login.wait", params, timeout=self._wait_budget(timeout_ms)) or {}
        return {"connected": bool(payload.get("connected")), "message": str(payload.get("message") or ""),
                "qr_data_url": payload.get("qrDataUrl")}

    def logout(self, channel: str, *, account_id: str | None = None) -> dict:
        payload = self._call([ADMIN], "channels.logout", _present({"channel": channel, "accountId": account_id})) or {}
        return {"channel": payload.get("channel", channel), "account_id": payload.get("accountId"),
                "cleared": bool(payload.get("cleared")), "logged_out": bool(payload.get("loggedOut"))}

    # -- configuration -------------------------------------------------------------------------
    def config_get(self) -> dict:
        payload = self._session([READ], lambda c: c.call("config.get"), through_restart=True) or {}
        # `parsed` is the authored document (what a merge patch applies to), secrets redacted.
        return {"hash": payload.get("hash"), "config": payload.get("parsed") or {},
                "valid": payload.get("valid"), "issues": payload.get("issues") or []}

    def config_patch(self, patch: dict, base_hash: str | None = None, *,
                     replace_paths: Sequence[str] = ()) -> dict:
        """Apply a JSON merge patch. A missing or stale base hash is re-read once and retried.
        OpenClaw refuses a patch that would drop entries of an array unless that array's dotted
        path is in `replace_paths` (measured on 2026.9.6; a path not in the config is harmless)."""
        raw = json.dumps(patch)
        extra = {"replacePaths": list(replace_paths)} if replace_paths else {}

        async def work(connection: OpenClawConnection) -> dict:
            current = base_hash or (await connection.call("config.get"))["hash"]
            try:
                return await connection.call("config.patch", {"raw": raw, "baseHash": current, **extra})
            except GatewayError as exc:
                if not _stale_hash(exc):
                    raise
            fresh = (await connection.call("config.get"))["hash"]
            return await connection.call("config.patch", {"raw": raw, "baseHash": fresh, **extra})

        # A merge patch applied twice changes nothing: one lost to a restart is sent again.
        payload = self._session([ADMIN], work, through_restart=True) or {}
        # Never pass on payload["config"]: the runtime returns the whole config, secrets in clear.
        sentinel = (payload.get("sentinel") or {}).get("stats") or {}
        return {"hash": payload.get("hash"), "changed_paths": list(payload.get("changedPaths") or []),
                "noop": bool(payload.get("noop")), "requires_restart": bool(sentinel.get("requiresRestart"))}

    # -- runs and usage ------------------------------------------------------------------------
    def usage(self, since: date) -> Usage:
        """Per (UTC day, provider, model) from `since` to today, one sessions.usage per day."""
        today = datetime.now(UTC).date()
        days = [since + timedelta(days=n) for n in range((today - since).days + 1)][-USAGE_MAX_DAYS:]

        async def work(connection: OpenClawConnection) -> Usage:
            rows, complete = [], True
            for day in days:
                payload = await _settled_usage(connection, day)
                complete &= (payload.get("cacheStatus") or {}).get("status", "fresh") != "refreshing"
                rows.extend(_usage_rows(day, payload))
            return Usage(rows=tuple(rows), complete=complete)

        return self._session([READ], work)

    def abort_runs(self) -> list[str]:
        """Abort every session with an active run, dropping its queued follow-ups."""
        async def work(connection: OpenClawConnection) -> list[str]:
            listing = await connection.call("sessions.list", {"limit": 1000}) or {}
            active = [row["key"] for row in listing.get("sessions") or [] if row.get("hasActiveRun") and row.get("key")]
            for key in active:
                await connection.call("sessions.abort", {"key": key, "clearQueued": True})
            return active

        return self._session([READ, WRITE], work)

    def send_message(self, text: str, *, conversation: str, timeout: float | None = None) -> ChatReply:
        """One agent turn in the session `fleet:<conversation>`, waiting for its final answer."""
        budget = timeout or CHAT_TIMEOUT
        params = {"message": text, "sessionKey": f"fleet:{conversation}", "idempotencyKey": uuid.uuid4().hex}
        # A run keeps the scopes of the client that started it: without operator.approvals its
        # exec tool cannot even ask for an approval ("approval registration failed").
        payload = self._call([WRITE, APPROVALS], "agent", params, timeout=budget, expect_final=True) or {}
        if payload.get("status") != "ok":
            raise GatewayError(
                f"The agent's run ended {payload.get('status')!r}: {payload.get('summary') or 'no summary'}.",
                runtime_code=str(payload.get("status") or ""),
            )
        result = payload.get("result") or {}
        meta = (result.get("meta") or {}).get("agentMeta") or {}
        usage = meta.get("usage") or {}
        return ChatReply(
            text="\n".join(str(p.get("text")) for p in result.get("payloads") or [] if p.get("text")),
            conversation=str(payload.get("sessionKey") or meta.get("sessionFile") or params["sessionKey"]),
            input_tokens=usage.get("input"),
            output_tokens=usage.get("output"),
        )

    # -- the Control UI, through the gateway proxy -------------------------------------------------
    def ui_relay(self) -> OpenClawUiRelay:
        return OpenClawUiRelay(self.endpoint, self.device)  # the device is read now, in sync code

    # -- chat (streamed) ----------------------------------------------------------------------------
    def chat(self, message: str, *, session_id: str | None) -> AsyncIterator[ChatEvent]:
        """`chat.send` on a connection held for the whole turn, its `chat` and `agent` events
        (measured on 2026.9.6: `chat` state delta/final/error/aborted; `agent` stream `item`
        for tools), and the turn's usage from the transcript once it is final."""
        self.device  # noqa: B018 - read now, in sync code: the turn runs on the event loop
        session_key = session_id or f"agent:main:fleet-{secrets.token_hex(6)}"
        return self._chat_turn(message, session_key)

    async def _chat_turn(self, message: str, session_key: str) -> AsyncIterator[ChatEvent]:
        frames: asyncio.Queue = asyncio.Queue()
        async with self.connection([READ, WRITE, APPROVALS], on_event=frames.put_nowait) as connection:
            ack = await connection.call("chat.send", {"sessionKey": session_key, "message": message,
                                                      "idempotencyKey": uuid.uuid4().hex}) or {}
            run_id = str(ack.get("runId") or "")
            while True:
                try:
                    async with asyncio.timeout(CHAT_IDLE_SECONDS):
                        frame = await _next_frame(frames, connection)
                except TimeoutError:
                    yield chat_error("gateway_timeout", f"The agent said nothing for {CHAT_IDLE_SECONDS:g} s.")
                    return
                if frame is None:  # the runtime closed the connection mid-turn (a restart, a crash)
                    yield chat_error("gateway_closed", "The agent's runtime closed the connection during the turn.")
                    return
                event = _chat_event_of(frame, run_id, session_key)
                if event is _FINAL:
                    break
                if event is not None:
                    yield event
                    if event.kind == "error":
                        return
            usage = _turn_usage(await connection.call("chat.history", {"sessionKey": session_key,
                                                                       "limit": CHAT_HISTORY_LIMIT}), run_id)
        yield chat_done(session_key, usage, run_id)

    def chat_sessions(self) -> list[ChatSession]:
        listing = self._call([READ], "sessions.list", {"limit": 1000}) or {}
        return [ChatSession(id=str(row["key"]), title=str(row.get("label") or row.get("displayName") or row["key"]),
                            updated_at=_iso_ms(row.get("updatedAt")), message_count=row.get("messageCount"))
                for row in listing.get("sessions") or [] if row.get("key")]

    def chat_messages(self, session_id: str) -> list[ChatMessage]:
        history = self._call([READ], "chat.history", {"sessionKey": session_id, "limit": CHAT_HISTORY_LIMIT}) or {}
        return [ChatMessage(role=str(row.get("role") or ""), text=message_text(row.get("content")),
                            at=_iso_ms(row.get("timestamp")))
                for row in history.get("messages") or [] if isinstance(row, dict)]

    # -- sandbox policy and approvals ----------------------------------------------------------------
    def exec_policy_get(self) -> dict:
        payload = self._call([ADMIN], "exec.approvals.get") or {}
        return {"file": payload.get("file") or {}, "hash": payload.get("hash"),
                "effective_defaults": payload.get("resolvedDefaults") or {}}

    def exec_policy_set(self, file: dict, base_hash: str) -> dict:
        payload = self._call([ADMIN], "exec.approvals.set", {"file": file, "baseHash": base_hash}) or {}
        return {"file": payload.get("file") or {}, "hash": payload.get("hash"),
                "effective_defaults": payload.get("resolvedDefaults") or {}}

    # Measured on 2026.9.6: for an unpaired device (a loopback backend is never paired),
    # operator.approvals alone lists nothing and cannot resolve ("unknown or expired approval
    # id"); operator.admin sees and answers every pending approval.
    def approvals_list(self) -> list[Approval]:
        pending = self._call([ADMIN], "exec.approval.list")
        if not isinstance(pending, list):
            raise GatewayProtocolError("exec.approval.list did not answer with a list.")
        approvals = []
        for item in pending:
            request = item.get("request") or {}
            approvals.append(Approval(id=str(item.get("id")), command=str(request.get("command") or ""),
                                      decisions=tuple(request.get("allowedDecisions") or ()), detail=item))
        return approvals

    def approval_resolve(self, approval_id: str, decision: str) -> dict:
        payload = self._call([ADMIN], "exec.approval.resolve", {"id": approval_id, "decision": decision})
        return payload if isinstance(payload, dict) else {"ok": True}

    def _wait_budget(self, timeout_ms: int | None) -> float:
        """A call that waits runtime-side gets that wait plus our usual margin."""
        return self.timeout + (timeout_ms or 0) / 1000


async def _hello(connection: OpenClawConnection) -> dict:
    return connection.hello or {}


async def _settled_usage(connection: OpenClawConnection, day: date) -> dict:
    """sessions.usage for one UTC day, waiting a little while the runtime's cache refreshes."""
    params = {"startDate": day.isoformat(), "endDate": day.isoformat(), "mode": "utc"}
    deadline = time.monotonic() + USAGE_SETTLE_SECONDS
    while True:
        payload = await connection.call("sessions.usage", params) or {}
        if (payload.get("cacheStatus") or {}).get("status") != "refreshing" or time.monotonic() >= deadline:
            return payload
        await asyncio.sleep(0.5)


def _usage_rows(day: date, payload: dict) -> list[UsageRow]:
    rows = []
    for entry in (payload.get("aggregates") or {}).get("byModel") or []:
        totals = entry.get("totals") or {}
        priced = _number(totals.get("missingCostEntries")) == 0
        rows.append(UsageRow(
            day=day,
            provider=str(entry.get("provider") or ""),
            model=str(entry.get("model") or ""),
            input_tokens=_number(totals.get("input")),
            output_tokens=_number(totals.get("output")),
            cache_read_tokens=_number(totals.get("cacheRead")),
            cache_write_tokens=_number(totals.get("cacheWrite")),
            cost_usd=float(totals.get("totalCost") or 0) if priced else None,
            calls=_number(entry.get("count")),
        ))
    return rows


_FINAL = ChatEvent("final", {})


def _chat_event_of(frame: dict, run_id: str, session_key: str) -> ChatEvent | None:
    """The ChatEvent a frame of the turn means (_FINAL once it is over), None for the others."""
    name, payload = frame.get("event"), frame.get("payload") or {}
    if name == "exec.approval.requested":
        request = payload.get("request") or {}
        if request.get("sessionKey") == session_key:
            return chat_approval(str(payload.get("id") or ""), str(request.get("command") or ""))
        return None
    if payload.get("runId") != run_id:
        return None
    if name == "chat":
        state = payload.get("state")
        if state == "delta" and payload.get("deltaText"):
            return chat_delta(str(payload["deltaText"]))
        if state == "final":
            return _FINAL
        if state in ("error", "aborted"):
            return chat_error("runtime_error" if state == "error" else "aborted",
                              str(payload.get("errorMessage") or payload.get("error") or f"The run ended {state}."))
    if name == "agent" and payload.get("stream") == "item":
        data = payload.get("data") or {}
        if data.get("kind") == "tool" and data.get("phase") in ("start", "end"):
            return chat_tool(str(data.get("name") or "tool"), str(data.get("status") or data["phase"]))
    return None


def _turn_usage(history: dict, run_id: str) -> ChatUsage | None:
    """The turn's tokens and cost, summed over its assistant messages in the transcript."""
    mine = [row for row in (history or {}).get("messages") or []
            if row.get("role") == "assistant" and (row.get("__openclaw") or {}).get("runId") == run_id
            and isinstance(row.get("usage"), dict)]
    if not mine:
        return None
    costs = [((row["usage"].get("cost") or {}).get("total")) for row in mine]
    return ChatUsage(
        model=str(mine[-1].get("model") or ""), provider=str(mine[-1].get("provider") or ""),
        input_tokens=sum(_number(row["usage"].get("input")) for row in mine),
        output_tokens=sum(_number(row["usage"].get("output")) for row in mine),
        cost_usd=sum(costs) if all(isinstance(c, (int, float)) for c in costs) else None,
    )


def _iso_ms(value) -> str | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(value / 1000, tz=UTC).isoformat().replace("+00:00", "Z")
    return None


def _present(params: dict) -> dict:
    return {k: v for k, v in params.items() if v is not None}


def run_sync(coroutine: Awaitable[T]) -> T:
    """Run `coroutine` to the end from sync code, on a private loop (a worker thread when this
    thread already runs a loop, where asyncio.run is not allowed)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


async def _next_frame(frames: asyncio.Queue, connection: OpenClawConnection) -> dict | None:
    """The next event frame of a turn, or None once the runtime closed the connection with
    nothing left queued: a turn never waits out its idle limit on a dead connection."""
    if not frames.empty():
        return frames.get_nowait()
    getter = asyncio.ensure_future(frames.get())
    closing = asyncio.ensure_future(connection.wait_closed())
    try:
        done, _ = await asyncio.wait({getter, closing}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in (getter, closing):
            if not waiter.done():
                waiter.cancel()
    if closing.done() and not closing.cancelled():
        closing.exception()  # how the reader ended is the connection's to report, not this turn's
    if getter in done:
        return getter.result()
    return frames.get_nowait() if not frames.empty() else None
