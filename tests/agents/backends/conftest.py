"""Fixtures the tests against the real Docker engine share."""

from __future__ import annotations

import pytest

from agents.backends.docker import DockerBackend
from tests.agents.backends.support import FakeAgent, answers_health, spec_for
from tests.support import wait_until


@pytest.fixture
def backend() -> DockerBackend:
    return DockerBackend()


@pytest.fixture
def deployed(backend):
    """An openclaw agent whose container is created, limited to 256 MB, and serving its gateway."""
    agent = FakeAgent()
    agent.place(backend.create(agent, spec_for(agent, ram_mb=256)))
    wait_until(lambda: answers_health(agent.gateway_host_port))
    return agent
