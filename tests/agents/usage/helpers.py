"""Helpers for usage and budget tests: record spend through the real ingestion service."""

from __future__ import annotations

import itertools
from datetime import datetime

from agents.usage.services import IngestResult, usage_ingest
from agents.usage.validation import usage_events_parse

_request_ids = itertools.count()


def event(**fields) -> dict:
    """One usage event as a runtime sends it; unique request_id unless given."""
    body = {
        "request_id": f"req-{next(_request_ids)}",
        "model": "gpt-4o",
        "provider": "openai",
        "input_tokens": 1000,
        "output_tokens": 500,
    }
    body.update(fields)
    return body


def spend(agent, usd: float, *, occurred_at: datetime | None = None, model: str = "gpt-4o") -> IngestResult:
    """Record `usd` of spend for `agent` (as a runtime-reported cost) through usage_ingest."""
    fields = {"cost_usd": usd, "model": model}
    if occurred_at is not None:
        fields["occurred_at"] = occurred_at.isoformat()
    return usage_ingest(agent=agent, events=usage_events_parse({"events": [event(**fields)]}))


def ingest(agent, *, events: list[dict], now: datetime | None = None) -> IngestResult:
    """Ingest `events` (each the fields that differ from event()'s) for `agent` at `now`."""
    return usage_ingest(agent=agent, events=usage_events_parse({"events": [event(**e) for e in events]}), now=now)
