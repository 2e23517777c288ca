"""The agent the stats routes are asked about."""

from __future__ import annotations

import pytest

from agents.models import Agent, Status


@pytest.fixture
def agent(tenancy) -> Agent:
    """A running agent of the workspace owner, shared into the workspace, with a container reference."""
    return tenancy.agent(tenancy.owner, status=Status.RUNNING, container_id="5" * 64)
