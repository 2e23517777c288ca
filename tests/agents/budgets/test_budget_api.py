"""GET/PUT /agents/:id/budget and DELETE /agents/:id/budget/:budgetId."""

from __future__ import annotations

import uuid

import pytest

from agents.models import Budget
from tests.agents.usage.helpers import spend
from tests.support import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner_client(tenancy):
    return client_for(tenancy.agent_owner)


def put(client, agent, **body):
    return client.put(f"/api/agents/{agent.id}/budget", body, format="json")


def test_a_new_agent_has_no_budgets_and_is_not_paused(owner_client, agent):
    response = owner_client.get(f"/api/agents/{agent.id}/budget")

    assert response.status_code == 200
    assert response.json() == {"budgets": [], "pausedReason": None}


def test_put_creates_a_budget_with_the_default_soft_threshold(owner_client, agent):
    response = put(owner_client, agent, period="weekly", limit_usd=25.5)

    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["period"], body["limitUsd"], body["softThresholdPct"]) == ("weekly", 25.5, 80)
    assert (body["currentUsd"], body["pct"], body["bucket"]) == (0, 0, "none")
    assert body["id"] == str(Budget.objects.get(agent=agent).id)
    assert body["resetsAt"].endswith("T00:00:00+00:00")


def test_a_second_put_for_the_same_period_updates_it(owner_client, agent):
    first = put(owner_client, agent, period="daily", limit_usd=10).json()

    second = put(owner_client, agent, period="daily", limit_usd=20, soft_threshold_pct=90)

    assert second.status_code == 200
    assert (second.json()["id"], second.json()["limitUsd"], second.json()["softThresholdPct"]) == (first["id"], 20, 90)
    assert Budget.objects.filter(agent=agent).count() == 1


def test_get_lists_one_budget_per_period_in_order_with_current_spend(owner_client, agent):
    for period, limit in (("monthly", 100), ("daily", 4), ("weekly", 20)):
        put(owner_client, agent, period=period, limit_usd=limit)
    spend(agent, 2)

    budgets = owner_client.get(f"/api/agents/{agent.id}/budget").json()["budgets"]

    assert [(b["period"], b["currentUsd"], b["pct"]) for b in budgets] == [
        ("daily", 2, 50), ("weekly", 2, 10), ("monthly", 2, 2)
    ]
    assert set(budgets[0]) == {"id", "period", "limitUsd", "softThresholdPct", "currentUsd", "pct", "bucket",
                               "resetsAt"}


def test_paused_reason_shows_while_a_cap_paused_the_agent(owner_client, agent):
    agent.paused_reason = "budget_exceeded"
    agent.save()

    assert owner_client.get(f"/api/agents/{agent.id}/budget").json()["pausedReason"] == "budget_exceeded"


def test_delete_removes_the_budget_and_leaves_a_paused_agent_stopped(owner_client, agent):
    budget_id = put(owner_client, agent, period="daily", limit_usd=1).json()["id"]
    agent.paused_reason = "budget_exceeded"
    agent.save()

    response = owner_client.delete(f"/api/agents/{agent.id}/budget/{budget_id}")

    assert (response.status_code, response.json()) == (200, {"success": True})
    assert not Budget.objects.filter(pk=budget_id).exists()
    agent.refresh_from_db()
    assert (agent.status, agent.paused_reason) == ("stopped", "budget_exceeded")


def test_deleting_an_unknown_budget_is_404(owner_client, agent):
    response = owner_client.delete(f"/api/agents/{agent.id}/budget/{uuid.uuid4()}")

    assert (response.status_code, response.json()["code"]) == (404, "not_found")


def test_a_budget_of_another_agent_cannot_be_deleted_through_this_one(tenancy, owner_client, agent):
    other = tenancy.agent()
    budget_id = put(owner_client, other, period="daily", limit_usd=1).json()["id"]

    response = owner_client.delete(f"/api/agents/{agent.id}/budget/{budget_id}")

    assert response.status_code == 404
    assert Budget.objects.filter(pk=budget_id).exists()


def test_an_unknown_agent_is_404(owner_client):
    response = owner_client.get(f"/api/agents/{uuid.uuid4()}/budget")

    assert response.status_code == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"limit_usd": 10}, "period"),
        ({"period": "yearly", "limit_usd": 10}, "period"),
        ({"period": "daily"}, "limit_usd"),
        ({"period": "daily", "limit_usd": 0}, "limit_usd"),
        ({"period": "daily", "limit_usd": -5}, "limit_usd"),
        ({"period": "daily", "limit_usd": "ten"}, "limit_usd"),
        ({"period": "daily", "limit_usd": True}, "limit_usd"),
        ({"period": "daily", "limit_usd": 0.0000001}, "limit_usd"),
        ({"period": "daily", "limit_usd": 10**10}, "limit_usd"),
        ({"period": "daily", "limit_usd": 10, "soft_threshold_pct": 0}, "soft_threshold_pct"),
        ({"period": "daily", "limit_usd": 10, "soft_threshold_pct": 0.5}, "soft_threshold_pct"),
        ({"period": "daily", "limit_usd": 10, "soft_threshold_pct": 101}, "soft_threshold_pct"),
        ({"period": "daily", "limit_usd": 10, "soft_threshold_pct": "high"}, "soft_threshold_pct"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(owner_client, agent, body, field):
    response = owner_client.put(f"/api/agents/{agent.id}/budget", body, format="json")

    assert response.status_code == 400, response.content
    assert response.json()["code"] == "validation_error"
    assert field in response.json()["fields"]
    assert not Budget.objects.exists()


@pytest.mark.parametrize("pct", [1, 100, 33.33])
def test_soft_threshold_accepts_1_to_100(owner_client, agent, pct):
    response = put(owner_client, agent, period="monthly", limit_usd=10, soft_threshold_pct=pct)

    assert (response.status_code, response.json()["softThresholdPct"]) == (201, pct)


READERS = ["agent_owner", "owner", "admin", "editor", "viewer", "platform_admin", "key:agents:read",
           "key:agents:write"]
WRITERS = ["agent_owner", "owner", "admin", "editor", "platform_admin", "key:agents:write"]
MATRIX = [
    ("viewer", 403),
    ("key:agents:read", 403),
    ("key:workspaces:read", 403),
    ("outsider", 404),
    ("other-key", 404),
    ("anonymous", 401),
]


@pytest.mark.parametrize(("who", "status"), [(w, 200) for w in READERS] + [
    ("key:workspaces:read", 403), ("outsider", 404), ("other-key", 404), ("anonymous", 401)])
def test_who_may_read_budgets(tenancy, agent, who, status):
    assert tenancy.client(who).get(f"/api/agents/{agent.id}/budget").status_code == status


@pytest.mark.parametrize(("who", "status"), [(w, 201) for w in WRITERS] + MATRIX)
def test_who_may_set_a_budget(tenancy, agent, who, status):
    response = put(tenancy.client(who), agent, period="daily", limit_usd=5)

    assert response.status_code == status, response.content
    assert Budget.objects.filter(agent=agent).exists() == (status == 201)


@pytest.mark.parametrize(("who", "status"), [(w, 200) for w in WRITERS] + MATRIX)
def test_who_may_remove_a_budget(tenancy, agent, owner_client, who, status):
    budget_id = put(owner_client, agent, period="daily", limit_usd=5).json()["id"]

    response = tenancy.client(who).delete(f"/api/agents/{agent.id}/budget/{budget_id}")

    assert response.status_code == status, response.content
    assert Budget.objects.filter(pk=budget_id).exists() == (status != 200)


def test_a_key_of_the_right_workspace_needs_agents_write_even_to_set_a_budget_on_its_agent(tenancy, agent):
    response = put(tenancy.client("key:agents:read,workspaces:read"), agent, period="daily", limit_usd=5)

    assert (response.status_code, response.json()["code"]) == (403, "missing_scope")
