"""Which agents a listener holds, read from the database: only what a hook wants, only running
or warning OpenClaw agents, only its shard, with the union of the hooks' scopes and caps."""

from __future__ import annotations

import logging

import pytest

from agents.gateway import register_listener_hook
from agents.gateway.listener import Shard
from agents.gateway.listener.selection import Need, wanted_agents
from agents.gateway.protocol import ADMIN, APPROVAL_CAPS, APPROVALS, READ
from agents.models import Agent
from tests.factories.agents import AgentFactory

pytestmark = pytest.mark.django_db


def _ignore(agent_id, event, payload):
    return None


def test_with_no_hook_registered_no_agent_is_held():
    AgentFactory.create_batch(3)

    assert wanted_agents(Shard()) == {}


def test_an_agent_no_hook_wants_is_not_held():
    wanted, unwanted = AgentFactory(sandbox_profile="nemoclaw"), AgentFactory()
    register_listener_hook("tests.sandboxed", events={"exec.approval.requested"}, handler=_ignore,
                           wants=lambda agents: agents.filter(sandbox_profile="nemoclaw"))

    assert set(wanted_agents(Shard())) == {str(wanted.pk)}
    assert str(unwanted.pk) not in wanted_agents(Shard())


def test_only_running_or_warning_openclaw_agents_are_held_whatever_a_hook_returns():
    running, warning = AgentFactory(status="running"), AgentFactory(status="warning")
    for status in ("queued", "deploying", "stopped", "error"):
        AgentFactory(status=status)
    AgentFactory(runtime_family="hermes")
    # A hook that ignores the candidates it is given cannot widen the set.
    register_listener_hook("tests.greedy", events={"health"}, handler=_ignore, wants=lambda agents: Agent.objects.all())

    assert set(wanted_agents(Shard())) == {str(running.pk), str(warning.pk)}


def test_an_agent_two_hooks_want_gets_one_connection_with_both_grants():
    both, approvals_only = AgentFactory(name="both"), AgentFactory(name="approvals-only")
    register_listener_hook("tests.approvals", events={"exec.approval.requested"}, handler=_ignore,
                           wants=lambda agents: agents, scopes={ADMIN, APPROVALS}, caps=set(APPROVAL_CAPS))
    register_listener_hook("tests.config", events={"config.changed"}, handler=_ignore,
                           wants=lambda agents: agents.filter(name="both"), scopes={READ})

    wanted = wanted_agents(Shard())

    assert wanted[str(both.pk)] == Need(hooks=("tests.approvals", "tests.config"),
                                        scopes=("operator.admin", "operator.approvals", "operator.read"),
                                        caps=("approvals", "exec-approvals"))
    assert wanted[str(approvals_only.pk)] == Need(hooks=("tests.approvals",),
                                                  scopes=("operator.admin", "operator.approvals"),
                                                  caps=("approvals", "exec-approvals"))


def test_each_shard_holds_its_own_agents_and_together_they_hold_all():
    agents = {str(a.pk) for a in AgentFactory.create_batch(30)}
    register_listener_hook("tests.all", events={"health"}, handler=_ignore, wants=lambda agents: agents)

    held = [set(wanted_agents(Shard(index=i, count=3))) for i in range(3)]

    assert set().union(*held) == agents
    assert sum(len(h) for h in held) == len(agents)
    assert all(Shard(index=i, count=3).owns(agent_id) for i, h in enumerate(held) for agent_id in h)


def test_a_hook_whose_wants_is_broken_is_skipped_and_logged_and_the_others_still_count(caplog):
    agent = AgentFactory()
    register_listener_hook("tests.broken", events={"health"}, handler=_ignore,
                           wants=lambda agents: agents.filter(no_such_field=1))
    register_listener_hook("tests.fine", events={"health"}, handler=_ignore, wants=lambda agents: agents)

    with caplog.at_level(logging.ERROR):
        wanted = wanted_agents(Shard())

    assert wanted == {str(agent.pk): Need(hooks=("tests.fine",), scopes=(), caps=())}
    assert "tests.broken" in caplog.text
