"""POST /agents/:id/usage is rate limited per agent (USAGE_REPORT_RATE_PER_AGENT)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from agents.gateway.tokens import usage_token_digest, usage_token_for
from agents.models import UsageEvent

from .helpers import event

pytestmark = pytest.mark.django_db


def token_client(agent) -> APIClient:
    token = usage_token_for(agent)
    agent.usage_token_digest = usage_token_digest(token)
    agent.save(update_fields=["usage_token_digest"])
    client = APIClient()
    client.credentials(HTTP_X_AGENT_TOKEN=token)
    return client


def report(client, agent):
    return client.post(f"/api/agents/{agent.id}/usage", {"events": [event()]}, format="json")


def test_one_report_over_the_rate_is_429_and_stores_nothing(tenancy, settings):
    settings.USAGE_REPORT_RATE_PER_AGENT = "2/1m"
    agent = tenancy.agent(gateway_token="gateway-secret-for-tests")
    client = token_client(agent)
    assert [report(client, agent).status_code for _ in range(2)] == [200, 200]

    response = report(client, agent)

    assert (response.status_code, response.json()["code"]) == (429, "rate_limited")
    assert int(response["Retry-After"]) >= 1
    assert UsageEvent.objects.filter(agent=agent).count() == 2


def test_the_limit_is_per_agent(tenancy, settings):
    settings.USAGE_REPORT_RATE_PER_AGENT = "1/1m"
    first = tenancy.agent(gateway_token="gateway-secret-one")
    second = tenancy.agent(gateway_token="gateway-secret-two")
    assert report(token_client(first), first).status_code == 200

    assert report(token_client(second), second).status_code == 200


def test_while_the_cache_that_counts_is_down_the_report_is_stored_unchecked(tenancy, settings, cache_down):
    settings.USAGE_REPORT_RATE_PER_AGENT = "1/1m"
    agent = tenancy.agent(gateway_token="gateway-secret-for-tests")
    client = token_client(agent)

    answers = [report(client, agent).status_code for _ in range(2)]

    assert answers == [200, 200]
    assert UsageEvent.objects.filter(agent=agent).count() == 2
