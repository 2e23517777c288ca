"""Budgets from the console: in dollars, checked and stored as the budget route does (its limits,
one budget per agent and period, a cap already reached acted on at once)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from agents.models import Budget

pytestmark = pytest.mark.django_db


def test_an_operator_sets_a_budget_in_dollars_and_changes_it(console, agent):
    added = console.post("/admin/agents/budget/add/", {"agent": agent.pk, "period": "monthly", "limit_usd": "12.50",
                                                       "soft_threshold_pct": "75"})

    assert added.status_code == 302, added.content.decode()[-2000:]
    budget = Budget.objects.get(agent=agent)
    assert (budget.limit_micros, budget.soft_threshold_pct) == (12_500_000, Decimal("75.00"))
    page = console.get(f"/admin/agents/budget/{budget.pk}/change/").content.decode()
    assert 'name="limit_usd"' in page and 'value="12.5' in page and "limit_micros" not in page

    changed = console.post(f"/admin/agents/budget/{budget.pk}/change/", {"limit_usd": "40", "soft_threshold_pct": "90"})

    assert changed.status_code == 302, changed.content.decode()[-2000:]
    budget.refresh_from_db()
    assert (budget.agent_id, budget.period, budget.limit_micros) == (agent.pk, "monthly", 40_000_000)


def test_the_routes_checks_refuse_on_the_fields_and_store_nothing(console, agent):
    too_big = console.post("/admin/agents/budget/add/", {"agent": agent.pk, "period": "daily",
                                                         "limit_usd": "2000000000", "soft_threshold_pct": "80"})
    zero = console.post("/admin/agents/budget/add/", {"agent": agent.pk, "period": "daily", "limit_usd": "0",
                                                      "soft_threshold_pct": "80"})
    bad_pct = console.post("/admin/agents/budget/add/", {"agent": agent.pk, "period": "daily", "limit_usd": "5",
                                                         "soft_threshold_pct": "0.5"})

    assert too_big.status_code == 200 and "At most 1000000000 USD." in too_big.content.decode()
    assert zero.status_code == 200 and "Must be a positive number of USD." in zero.content.decode()
    assert bad_pct.status_code == 200 and "Must be between 1 and 100." in bad_pct.content.decode()
    assert not Budget.objects.exists()


def test_adding_a_period_that_has_a_budget_changes_that_one(console, agent):
    for limit in ("5", "8"):
        response = console.post("/admin/agents/budget/add/", {"agent": agent.pk, "period": "weekly",
                                                              "limit_usd": limit, "soft_threshold_pct": "80"})
        assert response.status_code == 302, response.content.decode()[-2000:]

    assert list(Budget.objects.values_list("period", "limit_micros")) == [("weekly", 8_000_000)]


def test_deleting_from_the_console_removes_the_cap(console, agent):
    console.post("/admin/agents/budget/add/", {"agent": agent.pk, "period": "daily", "limit_usd": "3",
                                               "soft_threshold_pct": "80"})
    budget = Budget.objects.get()

    response = console.post(f"/admin/agents/budget/{budget.pk}/delete/", {"post": "yes"})

    assert response.status_code == 302
    assert not Budget.objects.exists()
