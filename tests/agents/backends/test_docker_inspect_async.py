"""The monitoring sweep's inspect on the event loop (docker_inspect_async) against the real engine:
the same LiveState as the blocking inspect, whatever the container's state."""

from __future__ import annotations

import asyncio

import pytest

from agents.backends.docker import DockerBackend
from tests.agents.backends.support import FakeAgent

pytestmark = pytest.mark.usefixtures("docker_settings")


def _inspected_on_the_loop(backend, agent):
    async def read():
        async with backend.state_reader(connections=4) as read_state:
            return await read_state(agent)

    return asyncio.run(read())


def test_a_running_container_reads_the_same_on_the_loop_as_blocking(backend, deployed):
    on_the_loop = _inspected_on_the_loop(backend, deployed)

    assert on_the_loop == backend.inspect(deployed)
    assert (on_the_loop.running, on_the_loop.status, on_the_loop.host_port) == (
        True, "running", deployed.gateway_host_port)
    assert on_the_loop.node  # the engine's name


def test_a_killed_container_reads_the_same_on_the_loop_as_blocking(backend, docker_engine, deployed):
    docker_engine.containers.get(deployed.container_id).kill()

    on_the_loop = _inspected_on_the_loop(backend, deployed)

    assert on_the_loop == backend.inspect(deployed)
    assert (on_the_loop.running, on_the_loop.exit_code) == (False, 137)


def test_a_container_is_found_by_its_label_and_a_removed_one_is_missing(backend, deployed):
    unrecorded = FakeAgent(id=deployed.id)  # a job that died before recording the container's id
    assert _inspected_on_the_loop(backend, unrecorded) == backend.inspect(unrecorded)
    assert _inspected_on_the_loop(backend, unrecorded).exists

    backend.remove(deployed)

    assert _inspected_on_the_loop(backend, deployed) == backend.inspect(deployed)
    assert not _inspected_on_the_loop(backend, deployed).exists


def test_an_engine_over_ssh_is_not_read_on_the_loop():
    assert DockerBackend(host="ssh://fleet@127.0.0.1").state_reader(connections=4) is None
