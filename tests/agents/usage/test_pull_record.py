"""agents.usage.pull: cumulative runtime figures become events, never counted twice."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from agents.gateway import UsageRow
from agents.models import AgentSpendDay, UsageDaily, UsageEvent
from agents.usage.pull import usage_pull_record
from agents.usage.services import usage_ingest
from agents.usage.validation import usage_events_parse
from tests.factories.agents import AgentFactory

from .helpers import event

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
TODAY = NOW.date()


def figure(tokens_in=1000, tokens_out=500, *, cost=None, day=TODAY, model="gpt-4o", provider="openai"):
    return UsageRow(day=day, provider=provider, model=model, input_tokens=tokens_in, output_tokens=tokens_out,
                    cost_usd=cost)


def totals(agent) -> tuple[int, int, int]:
    rows = UsageDaily.objects.filter(agent=agent)
    return (sum(r.input_tokens for r in rows), sum(r.output_tokens for r in rows), sum(r.cost_micros for r in rows))


def test_a_first_pull_records_what_the_runtime_counted():
    agent = AgentFactory()

    result = usage_pull_record(agent=agent, figures=[figure(cost=0.25)], now=NOW)

    assert (result.pulled, result.unchanged) == (1, 0)
    assert totals(agent) == (1000, 500, 250_000)
    assert UsageDaily.objects.get(agent=agent).rate_source == "runtime"
    assert AgentSpendDay.objects.get(agent=agent, day=TODAY).cost_micros == 250_000


def test_an_agent_metered_at_the_model_gateway_has_nothing_added_by_a_pull():
    agent = AgentFactory(model_routing="gateway")

    result = usage_pull_record(agent=agent, figures=[figure(cost=0.25)], now=NOW)

    assert (result.pulled, result.unchanged) == (0, 1)
    assert not UsageEvent.objects.filter(agent=agent).exists()


def test_a_repeated_pull_changes_nothing():
    agent = AgentFactory()
    usage_pull_record(agent=agent, figures=[figure(cost=0.25)], now=NOW)

    again = usage_pull_record(agent=agent, figures=[figure(cost=0.25)], now=NOW)

    assert (again.pulled, again.unchanged) == (0, 1)
    assert totals(agent) == (1000, 500, 250_000)
    assert UsageEvent.objects.filter(agent=agent).count() == 1


def test_a_later_pull_adds_only_the_growth():
    agent = AgentFactory()
    usage_pull_record(agent=agent, figures=[figure(1000, 500, cost=0.25)], now=NOW)

    usage_pull_record(agent=agent, figures=[figure(1600, 900, cost=0.40)], now=NOW)

    assert totals(agent) == (1600, 900, 400_000)


def test_events_pushed_for_the_same_calls_are_not_counted_again():
    agent = AgentFactory()
    pushed = event(input_tokens=700, output_tokens=300, cost_usd=0.1, occurred_at=NOW.isoformat())
    usage_ingest(agent=agent, events=usage_events_parse({"events": [pushed]}), now=NOW)

    usage_pull_record(agent=agent, figures=[figure(1000, 500, cost=0.25)], now=NOW)

    assert totals(agent) == (1000, 500, 250_000)


def test_unpriced_runtime_figures_are_priced_by_the_rate_book():
    agent = AgentFactory()

    usage_pull_record(agent=agent, figures=[figure(1_000_000, 0, model="gpt-4o")], now=NOW)

    daily = UsageDaily.objects.get(agent=agent)
    assert daily.rate_source == "catalog" and daily.cost_micros > 0


def test_each_day_and_model_is_its_own_key_and_a_past_day_lands_on_that_day():
    agent = AgentFactory()
    yesterday = date(2026, 11, 24)

    result = usage_pull_record(
        agent=agent,
        figures=[figure(day=yesterday), figure(model="claude-sonnet-4", provider="anthropic"), figure(), figure()],
        now=NOW,
    )

    assert result.pulled == 3  # the two figures of today's gpt-4o are one key, summed
    assert set(UsageDaily.objects.filter(agent=agent).values_list("day", "model", "input_tokens")) == {
        (yesterday, "gpt-4o", 1000), (TODAY, "claude-sonnet-4", 1000), (TODAY, "gpt-4o", 2000),
    }


def test_blank_names_from_a_runtime_are_kept_as_unknown():
    agent = AgentFactory()

    usage_pull_record(agent=agent, figures=[figure(model="  ", provider="")], now=NOW)

    assert UsageDaily.objects.get(agent=agent).model == "unknown"
