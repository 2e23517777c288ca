"""An engine that cannot be reached is a transient BackendUnreachable, for every verb."""

from __future__ import annotations

import socket

import pytest

from agents.backends.base import BackendUnreachable
from agents.backends.docker import DockerBackend
from tests.agents.backends.support import FakeAgent, spec_for


def closed_loopback_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again when the block ends


@pytest.fixture(params=["dead unix socket", "closed tcp port"])
def dead_engine(request, settings, tmp_path) -> str:
    if request.param == "dead unix socket":
        settings.DOCKER_HOST = f"unix://{tmp_path}/docker.sock"
    else:
        settings.DOCKER_HOST = f"tcp://127.0.0.1:{closed_loopback_port()}"
    settings.DOCKER_NETWORK_MODE = "host"
    return settings.DOCKER_HOST


def test_create_on_an_unreachable_engine_raises_a_transient_backend_unreachable(dead_engine):
    agent = FakeAgent()
    with pytest.raises(BackendUnreachable) as caught:
        DockerBackend().create(agent, spec_for(agent, image="fleet-test-runtime:latest"))
    assert caught.value.transient is True
    assert dead_engine in str(caught.value)


@pytest.mark.parametrize("verb", ["start", "stop", "restart", "remove", "inspect", "stats"])
def test_every_lifecycle_verb_on_an_unreachable_engine_raises_backend_unreachable(dead_engine, verb):
    agent = FakeAgent(container_id="0123456789ab")
    with pytest.raises(BackendUnreachable):
        getattr(DockerBackend(), verb)(agent)


def test_probing_an_unreachable_engine_raises_backend_unreachable(dead_engine):
    with pytest.raises(BackendUnreachable):
        DockerBackend().probe()
