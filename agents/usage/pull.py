"""Usage pulled from a runtime: cumulative figures turned into events, never counted twice.

A runtime reports what one (UTC day, provider, model) has used so far, not single calls. What
Fleet already recorded for that key (events pushed to POST /agents/:id/usage, and earlier pulls)
comes first; a pull adds only what the runtime counts beyond it, as one event whose request id
names the cumulative figures it brings the record up to. So a repeated pull finds nothing new,
two pulls at once insert the same event once (the (agent, request_id) key), and a call that was
both pushed and counted by the runtime is counted once.

`usage_pull` asks the agent's gateway and records the answer; the 5-minute sweep over every
serving agent is agents.usage.sweep. An agent whose model calls go through Fleet's model gateway
(`modelRouting: gateway`) is metered there, call by call: its runtime's figures are never added.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

from django.db.models import Sum
from django.utils import timezone

from ..gateway import UsageRow, gateway_for
from ..models import Agent, UsageDaily
from ..models.money import MICROS_PER_USD
from .services import usage_ingest
from .validation import STRING_LIMITS, UsageInput

UNKNOWN = "unknown"
# Today and the two days before: a day's figures may still grow after midnight (a run that
# spans it, a runtime that settles late), and a pull missed for a while still lands on its day.
PULL_DAYS_BACK = 2


@dataclass(frozen=True)
class _Figure:
    """One key of a pull, merged and with its cost as Decimal (None: the rate book prices it)."""

    day: date
    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal | None


@dataclass(frozen=True)
class PullResult:
    pulled: int  # keys that brought new usage
    unchanged: int  # keys the record already covered


def pull_since(now: datetime) -> date:
    return now.astimezone(UTC).date() - timedelta(days=PULL_DAYS_BACK)


def usage_pull(*, agent: Agent, now: datetime | None = None) -> PullResult:
    """Pull the agent's figures from its runtime now. AgentNotRunning (409) unless it serves;
    the gateway's errors (502 unreachable or refused) as they come."""
    now = now or timezone.now()
    usage = gateway_for(agent).usage(since=pull_since(now))
    # An incomplete answer (OpenClaw still settling) only counts less: the next pull adds the rest.
    return usage_pull_record(agent=agent, figures=usage.rows, now=now)


def usage_pull_record(*, agent: Agent, figures: Iterable[UsageRow], now: datetime | None = None) -> PullResult:
    now = now or timezone.now()
    figures = _merged(figures)
    if agent.metered_at_gateway:
        return PullResult(pulled=0, unchanged=len(figures))
    recorded = _recorded(agent, {figure.day for figure in figures})
    events = [event for figure in figures if (event := _event_beyond(figure, recorded, now)) is not None]
    accepted = usage_ingest(agent=agent, events=events, now=now).accepted if events else 0
    return PullResult(pulled=accepted, unchanged=len(figures) - accepted)


def _merged(rows: Iterable[UsageRow]) -> list[_Figure]:
    """One figure per key, names cut to what the store keeps (a runtime may split a key)."""
    merged: dict[tuple, _Figure] = {}
    for row in rows:
        key = (row.day, usage_key_name(row.provider, "provider"), usage_key_name(row.model, "model"))
        tokens_in, tokens_out, cost = row.input_tokens, row.output_tokens, _decimal(row.cost_usd)
        earlier = merged.get(key)
        if earlier is not None:
            tokens_in, tokens_out = tokens_in + earlier.input_tokens, tokens_out + earlier.output_tokens
            cost = None if cost is None or earlier.cost_usd is None else cost + earlier.cost_usd
        merged[key] = _Figure(*key, tokens_in, tokens_out, cost)
    return list(merged.values())


def _decimal(cost: float | None) -> Decimal | None:
    # str() first: Decimal(0.1) would carry the float's binary error into the micros.
    return None if cost is None else Decimal(str(cost))


def usage_key_name(value: str, field: str) -> str:
    """A provider or model name as the usage store keys it (cut to its length, "unknown" when
    the runtime gives none): whoever records a runtime's usage uses the same key."""
    cleaned = (value or "").replace("\x00", "").strip()
    return cleaned[: STRING_LIMITS[field]] or UNKNOWN


def _recorded(agent: Agent, days: set[date]) -> dict[tuple, tuple[int, int, int]]:
    """(day, provider, model) -> (input, output, cost micros) already recorded, every rate source."""
    if not days:
        return {}
    rows = (
        UsageDaily.objects.filter(agent_id=agent.pk, day__in=days)
        .values("day", "provider", "model")
        .annotate(i=Sum("input_tokens"), o=Sum("output_tokens"), c=Sum("cost_micros"))
    )
    return {(r["day"], r["provider"], r["model"]): (r["i"], r["o"], r["c"]) for r in rows}


def _event_beyond(figure: _Figure, recorded: dict, now: datetime) -> UsageInput | None:
    key = (figure.day, figure.provider, figure.model)
    have_in, have_out, have_micros = recorded.get(key, (0, 0, 0))
    extra_in, extra_out = figure.input_tokens - have_in, figure.output_tokens - have_out
    if extra_in <= 0 and extra_out <= 0:
        return None
    cost = None
    if figure.cost_usd is not None:
        cost = max(Decimal(0), figure.cost_usd - Decimal(have_micros) / MICROS_PER_USD)
    return UsageInput(
        request_id=_request_id(figure),
        model=figure.model,
        provider=figure.provider,
        input_tokens=max(0, extra_in),
        output_tokens=max(0, extra_out),
        cost_usd=cost,
        occurred_at=min(now, datetime.combine(figure.day, time.max, tzinfo=UTC)),
    )


def _request_id(figure: _Figure) -> str:
    """Names the cumulative state the event brings the record to: the same pull, the same id."""
    state = f"{figure.day}|{figure.provider}|{figure.model}|{figure.input_tokens}|{figure.output_tokens}"
    return "pull:" + hashlib.sha256(state.encode()).hexdigest()[:40]
