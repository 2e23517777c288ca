"""The migration that adds AgentSpendMonth fills it from the day rows already stored."""

from __future__ import annotations

from datetime import date

import pytest

from tests.factories.agents import AgentFactory
from tests.infra.migrations import migrate

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("agents", "0017_model_routing")]
AFTER = [("agents", "0018_agent_spend_month")]


def test_each_agents_months_are_the_sums_of_its_days(at_the_latest_state_afterwards):
    first, second = AgentFactory(), AgentFactory()
    apps = migrate(BEFORE)
    days = apps.get_model("agents", "AgentSpendDay")
    days.objects.bulk_create([
        days(agent_id=first.pk, day=date(2026, 10, 31), cost_micros=7),
        days(agent_id=first.pk, day=date(2026, 11, 1), cost_micros=100),
        days(agent_id=first.pk, day=date(2026, 11, 30), cost_micros=20),
        days(agent_id=first.pk, day=date(2026, 12, 1), cost_micros=3),
        days(agent_id=second.pk, day=date(2026, 11, 15), cost_micros=0),
        days(agent_id=second.pk, day=date(2025, 11, 15), cost_micros=5),  # the same month a year before
    ])

    apps = migrate(AFTER)

    months = apps.get_model("agents", "AgentSpendMonth").objects.values_list("agent_id", "month", "cost_micros")
    assert sorted(months, key=lambda row: (str(row[0]), row[1])) == sorted([
        (first.pk, date(2026, 10, 1), 7), (first.pk, date(2026, 11, 1), 120), (first.pk, date(2026, 12, 1), 3),
        (second.pk, date(2025, 11, 1), 5), (second.pk, date(2026, 11, 1), 0),
    ], key=lambda row: (str(row[0]), row[1]))
