"""Where the control plane reaches a Docker-run runtime's gateway, without asking the engine."""

from __future__ import annotations

from agents.backends.docker import DockerBackend
from tests.agents.backends.support import FakeAgent


def test_a_local_engines_runtime_is_reached_on_the_loopback():
    backend = DockerBackend(host="unix:///run/nothing-here/docker.sock")
    assert backend.gateway_endpoint(FakeAgent(gateway_host_port=19042)) == ("127.0.0.1", 19042)


def test_a_remote_engines_runtime_is_reached_at_the_engines_host():
    backend = DockerBackend(host="tcp://10.1.2.3:2376")
    assert backend.gateway_endpoint(FakeAgent(gateway_host_port=19042)) == ("10.1.2.3", 19042)


def test_an_ssh_engine_is_reached_at_its_host_without_the_user():
    backend = DockerBackend(host="ssh://deploy@docker-1.internal:22")
    assert backend.gateway_endpoint(FakeAgent(gateway_host_port=19043)) == ("docker-1.internal", 19043)
