"""Agents deployed later receive the integrations' variables at creation (Integrations rule 1)."""

from __future__ import annotations

import json

import pytest

from agents.services.workload import workload_spec_build
from integrations.models import Integration
from integrations.services import integration_connect
from tests.integrations.support import GITHUB_TOKEN

pytestmark = pytest.mark.django_db


def test_a_new_workload_carries_every_active_integrations_variables(tenancy):
    agent = tenancy.agent()
    integration_connect(agent=agent, provider="github", config={"token": GITHUB_TOKEN})
    integration_connect(agent=agent, provider="datadog", config={"api_key": "dd-key"})

    env = workload_spec_build(agent=agent, usage_token="u").env

    assert env["GITHUB_TOKEN"] == GITHUB_TOKEN
    assert (env["DD_API_KEY"], env["DD_SITE"]) == ("dd-key", "datadoghq.com")


def test_another_agents_integrations_stay_out(tenancy):
    agent = tenancy.agent()
    integration_connect(agent=tenancy.agent(), provider="github", config={"token": GITHUB_TOKEN})

    assert "GITHUB_TOKEN" not in workload_spec_build(agent=agent, usage_token="u").env


def test_an_oauth_integration_gives_only_its_access_token_and_client_id(tenancy):
    agent = tenancy.agent()
    Integration.objects.create(agent=agent, provider="twitter", config={"client_id": "cid"}, secrets=json.dumps(
        {"client_secret": "cs-secret", "access_token": "at-1", "refresh_token": "rt-1"}))

    env = workload_spec_build(agent=agent, usage_token="u").env

    assert (env["TWITTER_ACCESS_TOKEN"], env["TWITTER_CLIENT_ID"]) == ("at-1", "cid")
    assert "cs-secret" not in env.values() and "rt-1" not in env.values()


def test_an_integration_in_error_is_left_out(tenancy):
    agent = tenancy.agent()
    Integration.objects.create(agent=agent, provider="linkedin", status="error", config={"client_id": "c"},
                               secrets=json.dumps({"access_token": "expired"}))

    assert "LINKEDIN_ACCESS_TOKEN" not in workload_spec_build(agent=agent, usage_token="u").env
