"""The exact bodies of the budget routes and of the soft-threshold event's budget, byte for byte."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import time_machine

from agents.budgets.enforcement import budgets_sweep
from agents.models import Budget
from fleet.models import Event
from tests.agents.usage.helpers import spend
from tests.bodies import assert_body
from tests.support import client_for

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 18, 12, 0, tzinfo=UTC)  # a Wednesday


@pytest.fixture(autouse=True)
def frozen_clock():
    with time_machine.travel(NOW, tick=False):
        yield


@pytest.fixture
def agent(tenancy):
    return tenancy.agent(paused_reason="budget_exceeded")


def put(tenancy, agent, **body):
    return client_for(tenancy.agent_owner).put(f"/api/agents/{agent.id}/budget", body, format="json")


def test_put_answers_the_budget_201_then_200(tenancy, agent):
    created = put(tenancy, agent, period="weekly", limit_usd=25.5)
    budget = Budget.objects.get(agent=agent)
    expected = {"id": str(budget.id), "period": "weekly", "limitUsd": 25.5, "softThresholdPct": 80.0,
                "currentUsd": 0.0, "pct": 0.0, "bucket": "none", "resetsAt": "2026-03-23T00:00:00+00:00"}

    assert_body(created, expected, status=201)
    assert_body(put(tenancy, agent, period="weekly", limit_usd=10, soft_threshold_pct=50),
                {**expected, "limitUsd": 10.0, "softThresholdPct": 50.0})


def test_get_answers_every_period_and_the_paused_reason(tenancy, agent):
    put(tenancy, agent, period="monthly", limit_usd=100)
    put(tenancy, agent, period="daily", limit_usd=4)
    spend(agent, 3.5)
    ids = dict(Budget.objects.values_list("period", "id"))

    response = client_for(tenancy.viewer).get(f"/api/agents/{agent.id}/budget")

    assert_body(response, {"budgets": [
        {"id": str(ids["daily"]), "period": "daily", "limitUsd": 4.0, "softThresholdPct": 80.0, "currentUsd": 3.5,
         "pct": 87.5, "bucket": "soft", "resetsAt": "2026-03-19T00:00:00+00:00"},
        {"id": str(ids["monthly"]), "period": "monthly", "limitUsd": 100.0, "softThresholdPct": 80.0,
         "currentUsd": 3.5, "pct": 3.5, "bucket": "none", "resetsAt": "2026-04-01T00:00:00+00:00"},
    ], "pausedReason": "budget_exceeded"})


def test_delete_answers_success(tenancy, agent):
    budget_id = put(tenancy, agent, period="daily", limit_usd=1).json()["id"]

    assert_body(client_for(tenancy.agent_owner).delete(f"/api/agents/{agent.id}/budget/{budget_id}"), {"success": True})


def test_the_soft_event_carries_the_budget_as_the_api_shows_it(tenancy, agent):
    put(tenancy, agent, period="daily", limit_usd=10)
    spend(agent, 8)
    budgets_sweep()

    shown = Event.objects.get(agent_id=agent.id, kind="agent.budget_soft_exceeded").data["budget"]

    assert shown == {"id": str(Budget.objects.get(agent=agent).id), "period": "daily", "limitUsd": 10.0,
                     "softThresholdPct": 80.0, "currentUsd": 8.0, "pct": 80.0, "bucket": "soft",
                     "resetsAt": "2026-03-19T00:00:00+00:00"}
    floats = {k for k, v in shown.items() if isinstance(v, float)}
    assert floats == {"limitUsd", "softThresholdPct", "currentUsd", "pct"}
