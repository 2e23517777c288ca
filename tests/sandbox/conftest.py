"""What the sandbox tests share: nemoclaw enabled, sandboxed agents in the tenancy, and the
gateway listener running in a thread (as `manage.py gateway_listener` runs it)."""

from __future__ import annotations

import pytest

from tests.factories.agents import WorkspaceAgentFactory
from tests.infra.listener import running_listener  # noqa: F401 (fixture for this folder)


@pytest.fixture(autouse=True)
def _nemoclaw_enabled(settings):
    settings.ENABLED_SANDBOX_PROFILES = ["standard", "nemoclaw"]


def sandboxed(tenancy, **fields):
    """A nemoclaw agent of tenancy.agent_owner in tenancy.workspace (stopped, no container)."""
    return tenancy.agent(sandbox_profile="nemoclaw", **fields)


@pytest.fixture
def agent(tenancy):
    """The sandboxed agent most tests here act on."""
    return sandboxed(tenancy)


def assign(tenancy, agent):
    WorkspaceAgentFactory(workspace=tenancy.workspace, agent=agent)
    return agent
