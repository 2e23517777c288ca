"""The `remote` row of the target registry: ids of registered hosts resolve to the Remote Docker
backend (the Docker backend over SSH), others are UnknownTarget, and `instances` lists them."""

from __future__ import annotations

import uuid

import pytest

from agents.backends import registry
from agents.backends.docker import DockerBackend
from agents.backends.registry import UnknownTarget
from agents.backends.remote_docker import RemoteDockerBackend
from tests.factories.remote_hosts import RemoteHostFactory

pytestmark = pytest.mark.django_db


def test_a_registered_host_resolves_to_the_remote_docker_backend(settings):
    settings.REMOTE_DOCKER_PUBLISH_ADDRESS = "0.0.0.0"
    host = RemoteHostFactory(host="10.0.0.10")  # the gateway address is checked: a private one passes self-hosted

    backend = registry.backend_for_target(host.execution_target_id)

    assert isinstance(backend, RemoteDockerBackend) and isinstance(backend, DockerBackend)
    assert backend._gateway_host() == host.host and backend.publish_address == "0.0.0.0"
    assert not backend.engine_is_local
    assert host.private_key not in backend.host  # secrets enter the engine key only hashed
    assert registry.deploy_target_of(host.execution_target_id) == "remote-docker"


def test_an_unknown_host_is_an_unknown_target():
    for target_id in (f"remote:{uuid.uuid4()}", "remote:not-a-uuid"):
        with pytest.raises(UnknownTarget):
            registry.backend_for_target(target_id)


def test_instances_lists_every_registered_host():
    first, second = RemoteHostFactory(), RemoteHostFactory(owner=None)
    assert registry.TARGETS["remote"].instances() == [first.execution_target_id, second.execution_target_id]
