"""Budget periods are UTC calendar periods; spend resets at their boundaries (frozen clock)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from agents.budgets.periods import period_window
from tests.agents.usage.helpers import spend
from tests.support import client_for


@pytest.mark.parametrize(
    ("period", "now", "start", "end"),
    [
        ("daily", datetime(2026, 3, 15, 0, 0, tzinfo=UTC), date(2026, 3, 15), date(2026, 3, 16)),
        ("daily", datetime(2026, 3, 15, 23, 59, 59, tzinfo=UTC), date(2026, 3, 15), date(2026, 3, 16)),
        # A Sunday and the Monday after it: ISO weeks start on Monday.
        ("weekly", datetime(2026, 3, 15, 23, 59, 59, tzinfo=UTC), date(2026, 3, 9), date(2026, 3, 16)),
        ("weekly", datetime(2026, 3, 16, 0, 0, tzinfo=UTC), date(2026, 3, 16), date(2026, 3, 23)),
        ("weekly", datetime(2026, 12, 31, 12, 0, tzinfo=UTC), date(2026, 12, 28), date(2027, 1, 4)),
        ("monthly", datetime(2026, 2, 28, 23, 59, tzinfo=UTC), date(2026, 2, 1), date(2026, 3, 1)),
        ("monthly", datetime(2024, 2, 29, 12, 0, tzinfo=UTC), date(2024, 2, 1), date(2024, 3, 1)),
        ("monthly", datetime(2026, 12, 31, 23, 59, tzinfo=UTC), date(2026, 12, 1), date(2027, 1, 1)),
        # Another zone's evening is already the next UTC day.
        ("daily", datetime(2026, 3, 15, 20, 0, tzinfo=timezone(timedelta(hours=-5))), date(2026, 3, 16),
         date(2026, 3, 17)),
    ],
)
def test_a_period_is_the_utc_calendar_period_around_now(period, now, start, end):
    window = period_window(period, now)

    assert (window.start, window.end) == (start, end)
    assert window.resets_at == datetime.combine(end, datetime.min.time(), tzinfo=UTC)


def _budgets(user, agent) -> dict:
    # A fresh session each time: a token issued at another (travelled) moment is not valid now.
    return {b["period"]: b for b in client_for(user).get(f"/api/agents/{agent.id}/budget").json()["budgets"]}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("spent_at", "last_moment", "period", "resets_at"),
    [
        (datetime(2026, 3, 15, 8, 0, tzinfo=UTC), datetime(2026, 3, 15, 23, 59, 59, tzinfo=UTC), "daily",
         "2026-03-16T00:00:00+00:00"),
        (datetime(2026, 3, 9, 0, 0, tzinfo=UTC), datetime(2026, 3, 15, 23, 59, 59, tzinfo=UTC), "weekly",
         "2026-03-16T00:00:00+00:00"),
        (datetime(2026, 2, 1, 0, 0, tzinfo=UTC), datetime(2026, 2, 28, 23, 59, 59, tzinfo=UTC), "monthly",
         "2026-03-01T00:00:00+00:00"),
    ],
)
def test_spend_counts_until_the_period_ends_and_then_resets(
    tenancy, clock, spent_at, last_moment, period, resets_at
):
    agent = tenancy.agent()
    clock.move_to(spent_at)
    client_for(tenancy.agent_owner).put(
        f"/api/agents/{agent.id}/budget", {"period": period, "limit_usd": 10}, format="json"
    )
    spend(agent, 4.0)

    clock.move_to(last_moment)
    budget = _budgets(tenancy.agent_owner, agent)[period]
    assert (budget["currentUsd"], budget["resetsAt"]) == (4.0, resets_at)

    clock.move_to(last_moment + timedelta(seconds=1))
    budget = _budgets(tenancy.agent_owner, agent)[period]
    assert (budget["currentUsd"], budget["pct"], budget["bucket"]) == (0, 0, "none")
    assert budget["resetsAt"] > resets_at
