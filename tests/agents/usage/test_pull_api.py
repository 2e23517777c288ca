"""POST /agents/:id/usage/pull: who may pull, and a stopped agent. Its success against a real
runtime is in test_pull_runtimes.py (one OpenClaw container for all of them)."""

from __future__ import annotations

import pytest

from agents.models import UsageEvent

pytestmark = pytest.mark.django_db


def pull(client, agent):
    return client.post(f"/api/agents/{agent.id}/usage/pull")


def test_a_stopped_agent_cannot_be_pulled(tenancy):
    agent = tenancy.agent(status="stopped")

    response = pull(tenancy.client("editor"), agent)

    assert response.status_code == 409, response.content
    assert response.json()["code"] == "agent_not_running"
    assert not UsageEvent.objects.filter(agent=agent).exists()


@pytest.mark.parametrize(("caller", "status", "code"), [
    ("viewer", 403, "permission_denied"),
    ("outsider", 404, "not_found"),
    ("key:agents:read", 403, "missing_scope"),
    ("other-key", 404, "not_found"),
    ("anonymous", 401, "not_authenticated"),
])
def test_callers_who_may_not_operate_the_agent_are_refused(tenancy, caller, status, code):
    agent = tenancy.agent()

    response = pull(tenancy.client(caller), agent)

    assert response.status_code == status, response.content
    assert response.json()["code"] == code


@pytest.mark.parametrize("caller", ["editor", "key:agents:write"])
def test_operators_get_through_to_the_agents_state(tenancy, caller):
    # The agent is stopped: an operator passes access control and meets the state rule.
    response = pull(tenancy.client(caller), tenancy.agent())

    assert (response.status_code, response.json()["code"]) == (409, "agent_not_running")
