"""The monthly spend rollup (AgentSpendMonth): always the sum of the agent's day rows of that UTC
month, whatever the events' time zones, duplicates, prices or deletions."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.db.models import F

from agents.budgets.periods import month_start
from agents.models import AgentSpendDay, AgentSpendMonth, ModelRate
from tests.factories.agents import AgentFactory

from .helpers import ingest, spend

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 12, 2, 10, tzinfo=UTC)


def months_from_days() -> dict:
    """(agent id, month) -> micros, summed from AgentSpendDay: what the month rows must hold."""
    sums = Counter()
    for agent_id, day, cost in AgentSpendDay.objects.values_list("agent_id", "day", "cost_micros"):
        sums[(agent_id, month_start(day))] += cost
    return dict(sums)


def months_stored() -> dict:
    return {(agent_id, month): cost
            for agent_id, month, cost in AgentSpendMonth.objects.values_list("agent_id", "month", "cost_micros")}


def test_an_event_counts_in_the_month_of_its_utc_day_whatever_its_offset():
    agent = AgentFactory()
    ingest(agent, now=NOW, events=[
        {"occurred_at": "2026-12-01T01:30:00+03:00", "cost_usd": 1},  # 30 Nov 22:30 UTC: November
        {"occurred_at": "2026-11-30T23:30:00-02:00", "cost_usd": 2},  # 1 Dec 01:30 UTC: December
        {"occurred_at": "2026-11-30T23:59:59.999999+00:00", "cost_usd": 4},
        {"occurred_at": "2026-12-01T00:00:00+00:00", "cost_usd": 8},
    ])

    assert months_stored() == {(agent.pk, date(2026, 11, 1)): 5_000_000, (agent.pk, date(2026, 12, 1)): 10_000_000}
    assert months_stored() == months_from_days()


def test_a_replayed_batch_adds_nothing_to_the_month():
    agent = AgentFactory()
    batch = [{"request_id": f"replayed-{n}", "occurred_at": f"2026-11-{n + 20}T12:00:00Z", "cost_usd": 0.25}
             for n in range(5)]
    first = ingest(agent, now=NOW, events=batch)
    again = ingest(agent, now=NOW, events=batch + [{"request_id": "new-one", "cost_usd": 1}])

    assert (first.accepted, again.accepted, again.duplicates) == (5, 1, 5)
    assert months_stored() == {(agent.pk, date(2026, 11, 1)): 1_250_000, (agent.pk, date(2026, 12, 1)): 1_000_000}


def test_events_priced_by_rates_that_change_inside_the_month_add_what_each_day_was_charged():
    ModelRate.objects.create(model="priced-model", input_usd_per_mtok=Decimal("1"), output_usd_per_mtok=Decimal("2"),
                             effective_from=date(2026, 11, 1))
    ModelRate.objects.create(model="priced-model", input_usd_per_mtok=Decimal("3"), output_usd_per_mtok=Decimal("5"),
                             effective_from=date(2026, 11, 16))
    agent = AgentFactory()
    tokens = {"model": "priced-model", "input_tokens": 1_000_000, "output_tokens": 1_000_000}
    ingest(agent, now=NOW, events=[
        {**tokens, "occurred_at": "2026-11-15T23:59:00Z"},  # 1 + 2 USD
        {**tokens, "occurred_at": "2026-11-16T00:01:00Z"},  # 3 + 5 USD
        {**tokens, "model": "unknown-model", "occurred_at": "2026-11-17T00:00:00Z"},  # unpriced: 0
    ])
    # A later rate never reprices what was stored.
    ModelRate.objects.create(model="priced-model", input_usd_per_mtok=Decimal("9"), output_usd_per_mtok=Decimal("9"),
                             effective_from=date(2026, 11, 1), provider="openai")

    assert months_stored() == {(agent.pk, date(2026, 11, 1)): 11_000_000}
    assert months_stored() == months_from_days()


def test_many_agents_and_batches_keep_every_month_equal_to_its_days():
    agents = AgentFactory.create_batch(4)
    for n in range(60):
        agent = agents[n % 4]
        day = 1 + (n * 7) % 30
        ingest(agent, now=NOW, events=[
            {"occurred_at": f"2026-11-{day:02d}T{n % 24:02d}:15:00+05:00", "cost_usd": 0.01 * (n + 1)},
            {"occurred_at": f"2026-12-0{1 + n % 2}T0{n % 3}:00:00-01:00", "cost_usd": 0.003 * n},
            # Before 28 Oct 10:00 UTC is older than USAGE_MAX_AGE_DAYS: counted at NOW, in December.
            {"occurred_at": f"2026-10-{20 + n % 12}T20:00:00-06:00", "cost_usd": 0.5},
        ])

    stored = months_stored()
    assert stored == months_from_days()
    assert {month for _, month in stored} == {date(2026, 10, 1), date(2026, 11, 1), date(2026, 12, 1)}


def test_an_event_without_a_time_counts_in_the_current_month():
    agent = AgentFactory()
    spend(agent, 1.5)

    [(key, cost)] = months_stored().items()
    assert key == (agent.pk, month_start(datetime.now(UTC).date())) and cost == 1_500_000


def test_a_deleted_agent_takes_its_months_along():
    kept, deleted = AgentFactory(), AgentFactory()
    for agent in (kept, deleted):
        ingest(agent, now=NOW, events=[{"occurred_at": "2026-11-20T10:00:00Z", "cost_usd": 1}])

    deleted.delete()

    assert months_stored() == {(kept.pk, date(2026, 11, 1)): 1_000_000}


def test_the_rebuild_takes_in_days_written_without_their_months():
    agent, other = AgentFactory(), AgentFactory()
    ingest(agent, now=NOW, events=[{"occurred_at": "2026-11-20T10:00:00Z", "cost_usd": 1}])
    # What a process of the release before the month rollup writes: the day alone.
    AgentSpendDay.objects.filter(agent=agent).update(cost_micros=F("cost_micros") + 250_000)
    AgentSpendDay.objects.create(agent=other, day=date(2026, 12, 1), cost_micros=40)
    AgentSpendMonth.objects.create(agent=other, month=date(2026, 10, 1), cost_micros=9)  # no day behind it
    out = StringIO()

    call_command("spend_months_rebuild", stdout=out)

    assert months_stored() == months_from_days() == {
        (agent.pk, date(2026, 11, 1)): 1_250_000, (other.pk, date(2026, 12, 1)): 40}
    assert "2 agent months rebuilt" in out.getvalue()
