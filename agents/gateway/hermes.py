"""Hermes' RuntimeGateway: its API server over HTTP, `Authorization: Bearer <API_SERVER_KEY>`.

Hermes has no configuration, channel login, exec policy or approval listing API: those raise
GatewayUnsupported (the base class). Usage comes from `GET /api/sessions`, whose rows are
cumulative per session with no per-day split; a session counts on the UTC day it started, so a
(day, model) figure only grows while its sessions are active and a repeated pull changes nothing.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import UTC, date, datetime, time

from . import http
from .base import ChannelState, ChatReply, Handshake, Readiness, RuntimeGateway, Usage, UsageRow
from .connection import CALL_TIMEOUT
from .endpoint import Endpoint
from .errors import GatewayError, GatewayProtocolError

CHAT_TIMEOUT = 120.0
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

    def ready(self) -> Readiness:
        body = self._get(self.endpoint.family.ready_path)
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
