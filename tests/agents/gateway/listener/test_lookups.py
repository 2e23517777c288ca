"""The links' gateway reads, coalesced: thousands of links connecting at once cost one query per
batch and one read of the device key, not one of each per link."""

from __future__ import annotations

import asyncio

import pytest
from django.db import OperationalError

from agents.gateway.device import DeviceIdentity
from agents.gateway.errors import AgentNotRunning
from agents.gateway.listener.dispatch import db_job
from agents.gateway.listener.lookups import GatewayLookups
from agents.gateway.listener.selection import agent_gateways
from tests.factories.agents import AgentFactory


class CountedDb:
    """The supervisor's run_db, in a thread as the listener runs it, counting the jobs."""

    def __init__(self):
        self.jobs = 0

    async def __call__(self, fn, *args):
        self.jobs += 1
        return await asyncio.to_thread(db_job, fn, args)


@pytest.mark.django_db
def test_many_agents_gateways_are_read_in_two_queries_with_the_device_in_each(django_assert_num_queries):
    agents = AgentFactory.create_batch(20, gateway_token="t" * 43)
    ids = [str(agent.pk) for agent in agents]
    agent_gateways(ids[:1])  # the installation's device row is created on its first read

    with django_assert_num_queries(2):  # the agents, the installation's device key
        found = agent_gateways(ids)

    assert [found[str(a.pk)].endpoint.port for a in agents] == [a.gateway_host_port for a in agents]
    # The key travels in the gateway: opening a connection reads nothing more.
    assert all(isinstance(found[i].connection(["operator.read"]).device, DeviceIdentity) for i in ids)


@pytest.mark.django_db(transaction=True)
def test_lookups_asked_together_share_one_read_and_a_missing_agent_fails_only_its_own():
    agents = AgentFactory.create_batch(30, gateway_token="t" * 43)
    gone = "00000000-0000-0000-0000-000000000000"
    run_db = CountedDb()

    async def look_up_all():
        lookups = GatewayLookups(run_db)
        return await asyncio.gather(*(lookups.gateway(str(a.pk)) for a in agents), lookups.gateway(gone),
                                    return_exceptions=True)

    *gateways, missing = asyncio.run(look_up_all())

    assert run_db.jobs == 1
    assert [g.endpoint.agent_id for g in gateways] == [str(a.pk) for a in agents]
    assert isinstance(missing, AgentNotRunning)


def test_batches_are_bounded_and_a_failed_read_fails_its_waiters_only():
    calls: list[list[str]] = []

    async def run_db(fn, agent_ids):
        calls.append(list(agent_ids))
        await asyncio.sleep(0)
        if len(calls) == 1:
            raise OperationalError("the database went away")
        return {agent_id: f"gateway of {agent_id}" for agent_id in agent_ids}

    async def look_up(names):
        lookups = GatewayLookups(run_db, batch=3)
        return await asyncio.gather(*(lookups.gateway(name) for name in names), return_exceptions=True)

    results = asyncio.run(look_up(["a", "b", "c", "d", "e", "a"]))

    assert calls == [["a", "b", "c"], ["d", "e"]]  # "a" asked twice, read once
    assert all(isinstance(r, OperationalError) for r in (results[0], results[1], results[2], results[5]))
    assert results[3:5] == ["gateway of d", "gateway of e"]
