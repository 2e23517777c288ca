"""POST /api/agents/deploy is rate limited per acting user (DEPLOY_RATE_PER_USER)."""

from __future__ import annotations

import pytest

from agents.models import Agent
from tests.support import client_for

pytestmark = pytest.mark.django_db

DEPLOY = "/api/agents/deploy"


def deploy(client):
    return client.post(DEPLOY, {}, format="json")


def test_one_deploy_over_the_rate_is_429_with_retry_after_and_makes_no_agent(user_client, user, settings):
    settings.DEPLOY_RATE_PER_USER = "2/1m"
    assert [deploy(user_client).status_code for _ in range(2)] == [201, 201]

    response = deploy(user_client)

    assert response.status_code == 429
    assert response.json() == {"error": "Too many requests; try again later.", "code": "rate_limited"}
    assert 1 <= int(response["Retry-After"]) <= 60
    assert Agent.objects.filter(owner=user).count() == 2


def test_the_limit_is_per_user(tenancy, settings):
    settings.DEPLOY_RATE_PER_USER = "1/1m"
    assert deploy(tenancy.client("editor")).status_code == 201

    assert deploy(tenancy.client("admin")).status_code == 201


def test_an_api_key_counts_as_its_issuer(tenancy, settings):
    settings.DEPLOY_RATE_PER_USER = "1/1m"
    assert deploy(client_for(tenancy.owner)).status_code == 201

    response = deploy(client_for(api_key=tenancy.key("agents:write")))

    assert (response.status_code, response.json()["code"]) == (429, "rate_limited")


def test_while_the_cache_that_counts_is_down_the_deploy_is_served_unchecked(user_client, cache_down):
    response = deploy(user_client)

    assert response.status_code == 201, response.json()
    assert Agent.objects.filter(pk=response.json()["id"]).exists()
