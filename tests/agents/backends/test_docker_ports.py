"""Host ports on a real engine: unique per engine, even when deploys race."""

from __future__ import annotations

import socket
import time
from functools import partial

import pytest

from agents.backends.docker import DockerBackend
from agents.backends.ports import NoFreePort
from tests.agents.backends.support import FakeAgent, answers_health, spec_for
from tests.support import in_thread, run_in_threads, wait_until

pytestmark = pytest.mark.usefixtures("docker_settings")


def create_concurrently(agents: list[FakeAgent]) -> list:
    """Create every agent's container at once, from one thread each: the placements, or the
    exceptions in their place (the tests assert on them)."""
    creates = [partial(DockerBackend().create, agent, spec_for(agent)) for agent in agents]
    return run_in_threads(*creates, return_exceptions=True)


def test_two_concurrent_creates_for_different_agents_get_distinct_ports():
    placements = create_concurrently([FakeAgent(), FakeAgent()])
    assert placements[0].host_port != placements[1].host_port


def test_two_concurrent_creates_for_the_same_agent_give_one_container(docker_engine):
    agent = FakeAgent()
    first, second = create_concurrently([agent, agent])  # a job delivered twice at once

    assert first == second
    assert len(docker_engine.containers.list(all=True, ignore_removed=True,
                                             filters={"label": f"fleet.agent_id={agent.id}"})) == 1


def test_concurrent_creates_that_pick_the_same_port_back_off_until_each_has_its_own(settings, docker_engine):
    # Three deploys over three ports: collisions are likely, and every one must be resolved.
    settings.DOCKER_HOST_PORT_RANGE = (19993, 19995)
    agents = [FakeAgent() for _ in range(3)]
    placements = create_concurrently(agents)

    assert sorted(p.host_port for p in placements) == [19993, 19994, 19995]
    ids = {agent.id for agent in agents}
    managed = docker_engine.containers.list(all=True, ignore_removed=True, filters={"label": "fleet.test_case=backend"})
    assert len([c for c in managed if c.labels["fleet.agent_id"] in ids]) == 3  # the losers' containers are gone
    for placement in placements:
        wait_until(lambda placement=placement: answers_health(placement.host_port))


def test_an_earlier_container_backs_off_for_a_later_one_that_kept_the_port(docker_engine):
    # The race the engine allows: the later deploy looked while the earlier one was still being
    # created, saw nobody on the port and started. The earlier one must not keep it too.
    backend, port = DockerBackend(), 19984
    earlier_agent, later_agent = FakeAgent(), FakeAgent()
    earlier = backend._create_container(docker_engine, spec_for(earlier_agent), port)
    later = backend._create_container(docker_engine, spec_for(later_agent), port)
    try:
        later.start()  # it kept the port
        assert backend._lost_port_race(docker_engine, earlier, port)
    finally:
        earlier.remove(force=True)
        later.remove(force=True)


def test_an_earlier_container_keeps_the_port_once_the_later_one_backs_off(docker_engine):
    backend, port = DockerBackend(), 19983
    earlier = backend._create_container(docker_engine, spec_for(FakeAgent()), port)
    later = backend._create_container(docker_engine, spec_for(FakeAgent()), port)
    try:
        backing_off = in_thread(lambda: (time.sleep(0.5), later.remove(force=True)))
        assert not backend._lost_port_race(docker_engine, earlier, port)  # waited for it, then kept
        backing_off.result()
    finally:
        earlier.remove(force=True)


def test_a_stopped_agents_port_stays_reserved_for_it(settings):
    settings.DOCKER_HOST_PORT_RANGE = (19990, 19991)
    backend = DockerBackend()
    first = FakeAgent()
    first.place(backend.create(first, spec_for(first)))
    backend.stop(first)

    second = FakeAgent()
    assert backend.create(second, spec_for(second)).host_port != first.gateway_host_port


def test_a_port_something_else_on_this_host_listens_on_is_skipped(settings):
    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("0.0.0.0", 19988))
        squatter.listen()
        settings.DOCKER_HOST_PORT_RANGE = (19988, 19989)
        agent = FakeAgent()
        assert DockerBackend().create(agent, spec_for(agent)).host_port == 19989


def test_a_full_port_range_refuses_to_create(settings, docker_engine):
    settings.DOCKER_HOST_PORT_RANGE = (19986, 19986)
    backend = DockerBackend()
    holder = FakeAgent()
    backend.create(holder, spec_for(holder))

    late = FakeAgent()
    with pytest.raises(NoFreePort):
        backend.create(late, spec_for(late))
    assert not docker_engine.containers.list(all=True, ignore_removed=True,
                                             filters={"label": f"fleet.agent_id={late.id}"})
