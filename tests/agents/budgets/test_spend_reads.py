"""Budgets, the gateway's reservation and the dashboard read the monthly rollup now; every figure
they show equals what summing the day rows gives (how they read it before), on the same data:
around month and week boundaries, with `now` in another time zone, after an agent is deleted."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from django.db import connection

from agents.budgets.periods import period_windows
from agents.budgets.selectors import BudgetState, agent_spend_sql, budget_counts, budget_states
from agents.models import AgentSpendDay, Budget, BudgetPeriod, ModelRate
from agents.models.money import micros_to_usd
from console import dashboard
from tests.agents.usage.helpers import ingest
from tests.factories.agents import AgentFactory, make_budget

pytestmark = pytest.mark.django_db

INGESTED_AT = datetime(2026, 12, 2, 10, tzinfo=UTC)
NOWS = [
    datetime(2026, 10, 31, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(2026, 11, 1, tzinfo=UTC),
    datetime(2026, 11, 15, 12, tzinfo=UTC),  # a Sunday
    datetime(2026, 11, 30, 12, tzinfo=UTC),  # a Monday, its week ending in December
    datetime(2026, 11, 30, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(2026, 12, 1, tzinfo=UTC),
    datetime(2026, 12, 1, 1, tzinfo=timezone(timedelta(hours=3))),  # still 30 November in UTC
    datetime(2026, 11, 30, 22, tzinfo=timezone(timedelta(hours=-5))),  # already 1 December in UTC
    datetime(2026, 12, 2, 10, tzinfo=UTC),
]


def day_sums(agent_id, start, end) -> int:
    """The spend of `agent_id` on days in [start, end): the day rows summed, as read before."""
    return sum(AgentSpendDay.objects.filter(agent_id=agent_id, day__gte=start, day__lt=end)
               .values_list("cost_micros", flat=True))


def expected_states(now) -> dict:
    windows = period_windows(now)
    return {b.pk: BudgetState(b, day_sums(b.agent_id, windows[b.period].start, windows[b.period].end),
                              windows[b.period])
            for b in Budget.objects.all()}


def expected_top(now, count: int) -> list[tuple]:
    month = period_windows(now)[BudgetPeriod.MONTHLY]
    monthly = dict(Budget.objects.filter(period=BudgetPeriod.MONTHLY).values_list("agent_id", "limit_micros"))
    spent = {agent_id: day_sums(agent_id, month.start, month.end)
             for agent_id in AgentSpendDay.objects.values_list("agent_id", flat=True).distinct()}
    ranked = sorted(((-micros, agent_id) for agent_id, micros in spent.items() if micros > 0))[:count]
    return [(agent_id, -negative, monthly.get(agent_id)) for negative, agent_id in ranked]


def expected_fleet_spend(now) -> tuple[int, int]:
    today = now.date()  # the dashboard's own day: the date of `now` as given
    days = AgentSpendDay.objects.values_list("day", "cost_micros")
    return (sum(cost for day, cost in days if day == today),
            sum(cost for day, cost in days if day >= today.replace(day=1)))


@pytest.fixture
def fleet():
    """Agents whose spend lands on both sides of the month and week boundaries, in several time
    zones, some priced by rates that change on 1 December; budgets of every period, limits set
    so that some are under, some past the soft threshold, some exceeded."""
    ModelRate.objects.create(model="rated", input_usd_per_mtok=Decimal("1"), output_usd_per_mtok=Decimal("2"),
                             effective_from=datetime(2026, 10, 1).date())
    ModelRate.objects.create(model="rated", input_usd_per_mtok=Decimal("4"), output_usd_per_mtok=Decimal("1"),
                             effective_from=datetime(2026, 12, 1).date())
    agents = AgentFactory.create_batch(9)
    for n, agent in enumerate(agents):
        events = []
        for k in range(12):
            offset = (-7, -2, 0, 3, 9)[(n + k) % 5]
            when = datetime(2026, 10, 29, 20, tzinfo=UTC) + timedelta(hours=71 * k + 5 * n)
            when = when.astimezone(timezone(timedelta(hours=offset)))
            if k % 3:
                events.append({"occurred_at": when.isoformat(), "cost_usd": round(0.37 * (n + 1) + 0.11 * k, 2)})
            else:
                events.append({"occurred_at": when.isoformat(), "model": "rated",
                               "input_tokens": 100_000 * (n + 1), "output_tokens": 50_000 * k})
        events.append({"occurred_at": "2026-11-30T23:59:59+00:00", "cost_usd": n})  # the month's last instant
        events.append({"occurred_at": "2026-12-01T00:00:00+00:00", "cost_usd": n / 2})  # the next one's first
        ingest(agent, now=INGESTED_AT, events=events)
    for n, agent in enumerate(agents):
        for period, limit in (("daily", 0.8 + n), ("weekly", 4 + n), ("monthly", 9 + 2 * n)):
            if (n + len(period)) % 4:
                make_budget(agent, period=period, limit_usd=limit, soft_threshold_pct=50 + 5 * n)
    return agents


@pytest.mark.parametrize("now", NOWS, ids=[now.isoformat() for now in NOWS])
def test_every_budget_figure_equals_the_sum_of_its_days(fleet, now):
    expected = expected_states(now)

    states = {s.budget.pk: s for s in budget_states(now=now)}
    counts = budget_counts(now=now)

    assert {pk: s.spent_micros for pk, s in states.items()} == {pk: s.spent_micros for pk, s in expected.items()}
    assert {pk: s.window for pk, s in states.items()} == {pk: s.window for pk, s in expected.items()}
    buckets = Counter(s.bucket for s in expected.values())
    assert (counts.total, counts.soft, counts.exceeded) == (len(expected), buckets["soft"], buckets["hard"])
    assert {s.budget.pk for s in budget_states(now=now, at_least_soft=True)} == {
        pk for pk, s in expected.items() if s.soft_reached}
    for agent in fleet[:3]:
        assert {s.budget.pk: s.spent_micros for s in budget_states(now=now, agent_ids=[agent.pk])} == {
            pk: s.spent_micros for pk, s in expected.items() if s.budget.agent_id == agent.pk}


@pytest.mark.parametrize("now", NOWS, ids=[now.isoformat() for now in NOWS])
def test_the_gateways_reservation_reads_the_same_spend(fleet, now):
    expected = expected_states(now)
    for agent in fleet:
        sql, params = agent_spend_sql(agent_id=agent.pk, now=now)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT id, spent FROM ({sql}) x", params)
            read = {Budget._meta.pk.to_python(pk): int(spent) for pk, spent in cursor.fetchall()}
        assert read == {pk: s.spent_micros for pk, s in expected.items() if s.budget.agent_id == agent.pk}


@pytest.mark.parametrize("now", NOWS, ids=[now.isoformat() for now in NOWS])
def test_the_dashboards_spend_figures_equal_the_sums_of_the_days(fleet, now):
    today, month = expected_fleet_spend(now)

    panel = dashboard.spend_panel(now=now)
    top = dashboard.top_spenders(now=now)

    assert (panel["today_usd"], panel["month_usd"]) == (micros_to_usd(today), micros_to_usd(month))
    assert [(row.agent_id, row.spent_micros, row.monthly_limit_micros) for row in top] == expected_top(
        now, dashboard.TOP_SPENDERS)


def test_a_deleted_agent_leaves_every_figure_as_the_days_of_the_others_give_it(fleet):
    now = datetime(2026, 11, 30, 12, tzinfo=UTC)
    biggest = dashboard.top_spenders(now=now)[0].agent_id
    before = dashboard.spend_panel(now=now)

    fleet[[a.pk for a in fleet].index(biggest)].delete()

    assert biggest not in [row.agent_id for row in dashboard.top_spenders(now=now)]
    assert dashboard.spend_panel(now=now)["month_usd"] < before["month_usd"]
    today, month = expected_fleet_spend(now)
    assert (dashboard.spend_panel(now=now)["month_usd"], dashboard.spend_panel(now=now)["today_usd"]) == (
        micros_to_usd(month), micros_to_usd(today))
    assert [(r.agent_id, r.spent_micros) for r in dashboard.top_spenders(now=now)] == [
        (agent_id, spent) for agent_id, spent, _ in expected_top(now, dashboard.TOP_SPENDERS)]
    expected = expected_states(now)
    assert {s.budget.pk: s.spent_micros for s in budget_states(now=now)} == {
        pk: s.spent_micros for pk, s in expected.items()}
