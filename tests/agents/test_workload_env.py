"""Workload environment contributors: apps above agents add variables to new workloads
(agents.services.workload.register_workload_env) without agents importing them."""

from __future__ import annotations

import pytest

from agents.services.workload import register_workload_env, unregister_workload_env, workload_spec_build
from tests.factories.agents import AgentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def contributor():
    names = []

    def register(name, fn):
        names.append(name)
        register_workload_env(name, fn)

    yield register
    for name in names:
        unregister_workload_env(name)


def test_a_contributors_variables_reach_the_workload(contributor):
    agent = AgentFactory()
    contributor("test-extra", lambda a: {"EXTRA_TOKEN": f"for-{a.pk}"})

    spec = workload_spec_build(agent=agent, usage_token="u")

    assert spec.env["EXTRA_TOKEN"] == f"for-{agent.pk}"


def test_the_runtimes_own_variables_win_over_a_contributor(contributor):
    agent = AgentFactory(runtime_family="openclaw")
    contributor("test-clash", lambda a: {"OPENCLAW_GATEWAY_TOKEN": "stolen", "FLEET_USAGE_TOKEN": "x"})

    spec = workload_spec_build(agent=agent, usage_token="the-usage-token")

    assert spec.env["OPENCLAW_GATEWAY_TOKEN"] == str(agent.gateway_token)
    assert spec.env["FLEET_USAGE_TOKEN"] == "the-usage-token"


def test_a_failing_contributor_is_skipped_and_the_others_still_apply(contributor, caplog):
    agent = AgentFactory()
    contributor("test-broken", lambda a: 1 / 0)
    contributor("test-fine", lambda a: {"FINE": "1"})

    spec = workload_spec_build(agent=agent, usage_token="u")

    assert spec.env["FINE"] == "1"
    assert "test-broken" in caplog.text


def test_registering_again_under_a_name_replaces_the_contributor(contributor):
    agent = AgentFactory()
    contributor("test-same", lambda a: {"A": "1"})
    contributor("test-same", lambda a: {"B": "2"})

    env = workload_spec_build(agent=agent, usage_token="u").env

    assert "B" in env and "A" not in env
