"""Budget buckets: none below the soft threshold, soft from it, hard from 100 percent."""

from __future__ import annotations

import pytest

from tests.agents.usage.helpers import spend
from tests.support import client_for

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("spent_usd", "pct", "bucket"),
    [(0, 0, "none"), (79, 79, "none"), (80, 80, "soft"), (99, 99, "soft"), (100, 100, "hard"), (150, 150, "hard")],
)
def test_the_bucket_follows_the_spend(tenancy, spent_usd, pct, bucket):
    agent = tenancy.agent()  # stopped: a hard cap has nothing to pause
    client = client_for(tenancy.agent_owner)
    client.put(f"/api/agents/{agent.id}/budget", {"period": "monthly", "limit_usd": 100}, format="json")
    if spent_usd:
        spend(agent, spent_usd)

    budget = client.get(f"/api/agents/{agent.id}/budget").json()["budgets"][0]

    assert (budget["currentUsd"], budget["pct"], budget["bucket"]) == (spent_usd, pct, bucket)


def test_just_under_the_soft_threshold_is_still_none(tenancy):
    agent = tenancy.agent()
    client = client_for(tenancy.agent_owner)
    client.put(f"/api/agents/{agent.id}/budget", {"period": "daily", "limit_usd": 1}, format="json")
    spend(agent, 0.799999)

    budget = client.get(f"/api/agents/{agent.id}/budget").json()["budgets"][0]

    assert budget["bucket"] == "none"


def test_a_custom_soft_threshold_moves_the_soft_bucket(tenancy):
    agent = tenancy.agent()
    client = client_for(tenancy.agent_owner)
    client.put(f"/api/agents/{agent.id}/budget", {"period": "daily", "limit_usd": 10, "soft_threshold_pct": 50},
               format="json")
    spend(agent, 5)

    assert client.get(f"/api/agents/{agent.id}/budget").json()["budgets"][0]["bucket"] == "soft"
