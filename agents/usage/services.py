"""Ingesting token usage: price every event, store it once, roll it up, enforce budgets."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..budgets.enforcement import budget_check_agent
from ..models import Agent
from ..rates.book import RateBook
from .store import PricedEvent, usage_events_insert, usage_rollups_add
from .validation import UsageInput

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class IngestResult:
    accepted: int
    duplicates: int


def _occurred_at(event: UsageInput, *, now: datetime, oldest: datetime) -> datetime:
    """When the event counts: its occurred_at, or now when it has none, lies in the future (a
    runtime's clock running ahead) or is older than USAGE_MAX_AGE_DAYS (a clock running behind,
    or a replay: dated prices and past budget periods would let it escape every cap)."""
    occurred_at = event.occurred_at
    if occurred_at is None or occurred_at > now or occurred_at < oldest:
        return now.astimezone(UTC)
    return occurred_at.astimezone(UTC)


def _priced(events: list[UsageInput], *, now: datetime, counted_by: str | None = None) -> list[PricedEvent]:
    """Price each event at the time it counts (_occurred_at); a request_id repeated inside the
    batch keeps its first occurrence. `counted_by` (RateSource.GATEWAY) is the source recorded
    instead of the price's: who counted the tokens says more than where the price came from."""
    book = RateBook.load()
    oldest = now - timedelta(days=settings.USAGE_MAX_AGE_DAYS)
    seen: set[str] = set()
    priced = []
    for event in events:
        if event.request_id in seen:
            continue
        seen.add(event.request_id)
        occurred_at = _occurred_at(event, now=now, oldest=oldest)
        charge = book.charge(
            model=event.model,
            provider=event.provider,
            day=occurred_at.date(),
            input_tokens=event.input_tokens,
            output_tokens=event.output_tokens,
            cost_usd=event.cost_usd,
        )
        source = counted_by or charge.rate_source
        priced.append(PricedEvent(event.request_id, event.model, event.provider, event.input_tokens,
                                  event.output_tokens, charge.cost_micros, source, occurred_at))
    return priced


def usage_ingest(*, agent: Agent, events: list[UsageInput], now: datetime | None = None,
                 counted_by: str | None = None) -> IngestResult:
    """Store the events not seen before for this agent; idempotent on (agent, request_id)."""
    now = now or timezone.now()
    priced = _priced(events, now=now, counted_by=counted_by)
    # No savepoint when a caller's transaction holds this one (the gateway settles many calls in
    # one): nothing here catches its own failure, so the caller's rollback is the right one.
    with transaction.atomic(savepoint=False):
        inserted = usage_events_insert(agent_id=agent.pk, events=priced, received_at=now)
        usage_rollups_add(agent_id=agent.pk, events=inserted)
        if any(e.cost_micros for e in inserted):
            _enforce_budgets(agent, now=now)
    return IngestResult(accepted=len(inserted), duplicates=len(events) - len(inserted))


def _enforce_budgets(agent: Agent, *, now: datetime) -> None:
    # Usage must be recorded even if enforcement breaks: the sweep runs again within a minute.
    try:
        with transaction.atomic():
            budget_check_agent(agent_id=agent.pk, now=now)
    except Exception:
        logger.exception("Budget check after usage failed for agent %s", agent.pk)
