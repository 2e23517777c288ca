"""DockerBackend against the real engine: each agent's state volume at /state, kept across a
restart and a redeploy, removed with the agent. The busybox test image is enough here; the
real runtimes writing their state there are in tests/agents/runtimes."""

from __future__ import annotations

import pytest
from docker import errors as docker_errors

from agents.backends.docker_engine import state_volume_name
from agents.models import Status
from agents.services.lifecycle import agent_delete
from tests.agents.backends.support import FakeAgent, spec_for
from tests.factories.agents import AgentFactory
from tests.infra.docker import exec_in

pytestmark = pytest.mark.usefixtures("docker_settings")


def _exec(docker_engine, container_id: str, command: str) -> tuple[int, str]:
    result = exec_in(docker_engine.containers.get(container_id), ["sh", "-c", command])
    return result.exit_code, result.output.decode().strip()


def _volume(docker_engine, agent_id: str):
    try:
        return docker_engine.volumes.get(state_volume_name(agent_id))
    except docker_errors.NotFound:
        return None


def test_create_mounts_a_labelled_state_volume_of_the_agent_at_state(backend, docker_engine):
    agent = FakeAgent()
    placement = backend.create(agent, spec_for(agent))

    volume = _volume(docker_engine, agent.id)
    assert volume is not None
    assert volume.attrs["Labels"]["fleet.agent_id"] == agent.id
    assert volume.attrs["Labels"]["fleet.managed"] == "true"
    mounts = docker_engine.containers.get(placement.container_id).attrs["Mounts"]
    assert [(m["Type"], m["Name"], m["Destination"]) for m in mounts] == [("volume", volume.name, "/state")]


def test_two_agents_never_share_a_state_volume(backend):
    first, second = FakeAgent(), FakeAgent()
    assert state_volume_name(first.id) != state_volume_name(second.id)
    assert first.id.replace("-", "") in state_volume_name(first.id)


def test_state_survives_a_restart(backend, docker_engine, deployed):
    assert _exec(docker_engine, deployed.container_id, "echo kept >/state/marker")[0] == 0

    backend.restart(deployed)

    assert _exec(docker_engine, deployed.container_id, "cat /state/marker") == (0, "kept")


def test_a_redeploy_keeps_the_state_and_a_remove_deletes_it(backend, docker_engine, deployed):
    _exec(docker_engine, deployed.container_id, "echo kept >/state/marker")

    backend.remove(deployed, keep_state=True)  # what a redeploy does before creating anew
    assert _volume(docker_engine, deployed.id) is not None
    fresh = FakeAgent(id=deployed.id).place(backend.create(deployed, spec_for(deployed)))
    assert fresh.container_id != deployed.container_id
    assert _exec(docker_engine, fresh.container_id, "cat /state/marker") == (0, "kept")

    backend.remove(fresh)
    assert _volume(docker_engine, deployed.id) is None
    with pytest.raises(docker_errors.NotFound):
        docker_engine.containers.get(fresh.container_id)


def test_deleting_an_agent_whose_redeploy_failed_removes_the_state_it_left(backend, docker_engine, db):
    agent = AgentFactory(status=Status.ERROR, container_id="", container_name="", gateway_host_port=None)
    backend.create(agent, spec_for(FakeAgent(id=str(agent.id))))
    backend.remove(agent, keep_state=True)  # the redeploy removed the container, then failed
    assert _volume(docker_engine, str(agent.id)) is not None

    agent_delete(agent=agent)

    assert _volume(docker_engine, str(agent.id)) is None
