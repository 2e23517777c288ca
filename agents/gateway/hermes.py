"""Hermes' RuntimeGateway: its API server over HTTP, `Authorization: Bearer <API_SERVER_KEY>`.

Hermes has no configuration, channel login, exec policy or approval listing API: those raise
GatewayUnsupported (the base class). Usage comes from `GET /api/sessions`, whose rows are
cumulative per session with no per-day split; a session counts on the UTC day it started, so a
(day, model) figure only grows while its sessions are active and a repeated pull changes nothing.
"""

from __future__ import annotations

import json
import re
import secrets
from collections import defaultdict
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, time

from . import http
from .async_http import open_request
from .base import (
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
    chat_delta,
    chat_done,
    chat_error,
    chat_tool,
    message_text,
)
from .connection import CALL_TIMEOUT
from .endpoint import Endpoint
from .errors import GatewayError, GatewayProtocolError, scrub

CHAT_TIMEOUT = 120.0
CHAT_IDLE_SECONDS = 300.0  # a turn whose stream says nothing (not even its keep-alive) this long is dead
PAGE = 200  # Hermes' largest page of /api/sessions
MAX_PAGES = 50  # 10,000 sessions: a bound on one pull, not a limit anyone should reach
CONTROL_PLATFORM = "api_server"  # the API Fleet talks through, not a messaging channel
# Fleet's neutral decisions (OpenClaw's words) and Hermes' choices for a run's approval.
CHOICES = {"allow-once": "once", "allow-always": "always", "allow-session": "session", "deny": "deny"}
_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_.:-]")


def _epoch_day(value) -> date | None:
    if not isinstance(value, (int, float)):
        return None
    return datetime.fromtimestamp(value, tz=UTC).date()


def _start_of(day: date) -> float:
    return datetime.combine(day, time.min, tzinfo=UTC).timestamp()


def session_id_for(conversation: str) -> str:
    """The Hermes session a Fleet conversation continues in (Hermes refuses path-like ids)."""
    return "fleet-" + _UNSAFE_ID.sub("-", conversation)[:200]


class HermesGateway(RuntimeGateway):
    family = "hermes"

    def __init__(self, endpoint: Endpoint, *, timeout: float = CALL_TIMEOUT):
        self.endpoint = endpoint
        self.timeout = timeout

    def _get(self, route: str, *, authenticated: bool = True, **options) -> dict:
        return http.request(
            self.endpoint, "GET", route, authenticated=authenticated, timeout=self.timeout, **options
        )[1]

    # -- reachability --------------------------------------------------------------------------
    def handshake(self) -> Handshake:
        self._get("/v1/capabilities")  # the cheapest authenticated route: proves the key
        version = self._get(self.endpoint.family.health_path, authenticated=False).get("version")
        return Handshake(family=self.family, version=str(version or ""))

    def health(self) -> dict:
        # Liveness is the 2xx; a runtime behind a proxy may answer it in plain text.
        return self._get(self.endpoint.family.health_path, authenticated=False, json_required=False)

    ready_authenticated = True

    def ready(self) -> Readiness:
        return self.readiness_of(200, self._get(self.endpoint.family.ready_path))

    @staticmethod
    def readiness_of(status: int, body: dict) -> Readiness:
        checks = (body.get("readiness") or {}).get("checks") or {}
        failing = tuple(name for name, check in checks.items() if (check or {}).get("status") != "ok")
        # "degraded" checks (no model yet, a full disk) are reported, but Hermes serves while its
        # gateway runs; draining is not ready.
        return Readiness(ready=body.get("gateway_state") == "running", failing=failing, detail=body)

    # -- channels ------------------------------------------------------------------------------
    def channels_status(self) -> list[ChannelState]:
        platforms = self._get(self.endpoint.family.ready_path).get("platforms") or {}
        states = []
        for name, state in platforms.items():
            if name == CONTROL_PLATFORM or not isinstance(state, dict):
                continue
            current = str(state.get("state") or "")
            states.append(ChannelState(channel=name, configured=True, running=current in ("connected", "running"),
                                       connected=current == "connected", error=str(state.get("error_message") or "")))
        return states

    # -- runs and usage ------------------------------------------------------------------------
    def usage(self, since: date) -> Usage:
        """Sessions active since `since`, each on its start day, plus every other session that
        started on one of those days (a day's figure must include all of its sessions)."""
        floor = _start_of(since)
        sessions: list[dict] = []
        for page in range(MAX_PAGES):
            body = self._get(f"/api/sessions?limit={PAGE}&offset={page * PAGE}&include_children=true")
            rows = body.get("data")
            if not isinstance(rows, list):
                raise GatewayProtocolError("GET /api/sessions did not answer with a list of sessions.")
            for row in rows:  # newest activity first: the first one too old ends the walk
                if (row.get("last_active") or row.get("started_at") or 0) < floor:
                    return Usage(rows=tuple(_rows_by_day(sessions)))
                started = _epoch_day(row.get("started_at"))
                if started is not None:
                    floor = min(floor, _start_of(started))  # that whole day must be counted
                sessions.append(row)
            if not body.get("has_more"):
                return Usage(rows=tuple(_rows_by_day(sessions)))
        return Usage(rows=tuple(_rows_by_day(sessions)), complete=False)  # more sessions than one pull reads

    def send_message(self, text: str, *, conversation: str, timeout: float | None = None) -> ChatReply:
        """One turn in the Hermes session of `conversation` (its history lives in Hermes)."""
        session = session_id_for(conversation)
        _, body, headers = http.request(
            self.endpoint, "POST", "/v1/chat/completions",
            json_body={"model": "hermes-agent", "messages": [{"role": "user", "content": text}]},
            headers={"X-Hermes-Session-Id": session, "X-Hermes-Session-Key": session},
            timeout=timeout or CHAT_TIMEOUT,
        )
        choices = body.get("choices") or []
        if not choices or choices[0].get("finish_reason") == "error":
            raise GatewayError(f"The agent's run failed: {(body.get('error') or {}).get('message') or 'no answer'}.")
        usage = body.get("usage") or {}
        return ChatReply(
            text=str((choices[0].get("message") or {}).get("content") or ""),
            conversation=headers.get("X-Hermes-Session-Id") or session,
            input_tokens=usage.get("prompt_tokens"),
            output_tokens=usage.get("completion_tokens"),
        )

    # -- chat ----------------------------------------------------------------------------------
    async def chat(self, message: str, *, session_id: str | None) -> AsyncIterator[ChatEvent]:
        """A turn through `/v1/chat/completions` streamed (OpenAI's chunks, Hermes' tool progress
        events). A new conversation gets a session id of Fleet's own: without one Hermes derives
        it from the first message, and two chats opening with "hi" would share their history."""
        session = session_id or f"fleet-{secrets.token_hex(8)}"
        body = {"model": "hermes-agent", "stream": True, "messages": [{"role": "user", "content": message}]}
        headers = {"X-Hermes-Session-Id": session, "Content-Type": "application/json", "Accept": "text/event-stream"}
        async with open_request(self.endpoint, "POST", "/v1/chat/completions", headers=headers,
                                data=json.dumps(body), read_timeout=CHAT_IDLE_SECONDS) as response:
            if response.status >= 300:
                text = (await response.text())[:2000]
                raise http.refusal(response.status, _json_or_none(text), text, (self.endpoint.token,),
                                   what="the chat turn")
            session = response.headers.get("X-Hermes-Session-Id") or session
            usage, run_id = None, ""
            async for event, data in _server_sent_events(response.content):
                run_id = str(data.get("id") or run_id)
                if event == "hermes.tool.progress":
                    yield chat_tool(str(data.get("tool") or data.get("name") or "tool"),
                                    str(data.get("status") or "running"))
                    continue
                choice = (data.get("choices") or [{}])[0]
                text = (choice.get("delta") or {}).get("content")
                if text:
                    yield chat_delta(text)
                if data.get("usage"):
                    usage = data["usage"]
                if choice.get("finish_reason") == "error":
                    error = data.get("error") or {}
                    yield chat_error("runtime_error", scrub(error.get("message") or "The agent's run failed.",
                                                            (self.endpoint.token,)))
                    return
            yield chat_done(session, await self._turn_usage(session, usage) if usage else None, run_id=run_id)

    async def _turn_usage(self, session: str, usage: dict) -> ChatUsage:
        """The turn's tokens under the key Hermes' own usage report files them: the session's
        real model (a chunk names only "hermes-agent") and the moment the session started."""
        row = {}
        async with open_request(self.endpoint, "GET", f"/api/sessions/{session}", read_timeout=self.timeout) as answer:
            if answer.status == 200:
                row = (await answer.json(content_type=None)).get("session") or {}
        started = row.get("started_at")
        return ChatUsage(
            model=str(row.get("model") or ""), provider="",  # Hermes' session rows name no provider
            input_tokens=int(usage.get("prompt_tokens") or 0), output_tokens=int(usage.get("completion_tokens") or 0),
            counted_at=datetime.fromtimestamp(started, tz=UTC) if isinstance(started, (int, float)) else None,
        )

    def chat_sessions(self) -> list[ChatSession]:
        rows = self._get(f"/api/sessions?limit={PAGE}").get("data")
        if not isinstance(rows, list):
            raise GatewayProtocolError("GET /api/sessions did not answer with a list of sessions.")
        return [ChatSession(id=str(row.get("id")), title=str(row.get("title") or row.get("preview") or ""),
                            updated_at=_iso(row.get("last_active") or row.get("started_at")),
                            message_count=row.get("message_count"))
                for row in rows if row.get("id")]

    def chat_messages(self, session_id: str) -> list[ChatMessage]:
        if _UNSAFE_ID.search(session_id):
            raise GatewayError("No such conversation.", status=404)
        rows = self._get(f"/api/sessions/{session_id}/messages").get("data")
        if not isinstance(rows, list):
            raise GatewayProtocolError("The session's messages did not come as a list.")
        return [ChatMessage(role=str(row.get("role") or ""), text=message_text(row.get("content")),
                            at=_iso(row.get("timestamp")))
                for row in rows if isinstance(row, dict)]

    # -- approvals -----------------------------------------------------------------------------
    def approval_resolve(self, approval_id: str, decision: str) -> dict:
        """Answer a run's pending approval; `approval_id` is the run's id (Hermes asks per run)."""
        choice = CHOICES.get(decision)
        if choice is None:
            raise GatewayError(f"Hermes cannot answer an approval with {decision!r}; use one of {', '.join(CHOICES)}.")
        _, body, _ = http.request(self.endpoint, "POST", f"/v1/runs/{approval_id}/approval",
                                  json_body={"choice": choice}, timeout=self.timeout)
        return body


def _rows_by_day(sessions: list[dict]) -> list[UsageRow]:
    totals: dict[tuple[date, str], dict] = defaultdict(lambda: defaultdict(float))
    priced: dict[tuple[date, str], bool] = defaultdict(lambda: True)
    for row in sessions:
        day = _epoch_day(row.get("started_at"))
        if day is None:
            continue
        key = (day, str(row.get("model") or ""))
        sums = totals[key]
        for field in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "api_call_count"):
            sums[field] += row.get(field) or 0
        cost = row.get("actual_cost_usd")
        cost = cost if cost is not None else row.get("estimated_cost_usd")
        if cost:  # Hermes estimates 0.0 for models it has no price for: that is "unpriced"
            sums["cost"] += cost
        else:
            priced[key] = False
    return [
        UsageRow(
            day=day, provider="", model=model,  # Hermes' session rows do not name the provider
            input_tokens=int(s["input_tokens"]), output_tokens=int(s["output_tokens"]),
            cache_read_tokens=int(s["cache_read_tokens"]), cache_write_tokens=int(s["cache_write_tokens"]),
            cost_usd=s["cost"] if priced[(day, model)] else None, calls=int(s["api_call_count"]),
        )
        for (day, model), s in sorted(totals.items())
    ]


def _iso(value) -> str | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, tz=UTC).isoformat().replace("+00:00", "Z")
    return str(value) if value else None


def _json_or_none(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return None


async def _server_sent_events(body) -> AsyncIterator[tuple[str, dict]]:
    """(event name, JSON data) of each event of an SSE body; comments and `[DONE]` skipped."""
    event, data = "", []
    async for raw in body:
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        if line.startswith(":"):
            continue
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif not line and data:
            text = "\n".join(data)
            if text != "[DONE]":
                parsed = _json_or_none(text)
                if isinstance(parsed, dict):
                    yield event, parsed
            event, data = "", []
