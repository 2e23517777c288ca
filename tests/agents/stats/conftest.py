"""A tenancy around one agent: its owner, a viewer of the workspace it is shared to,
an outsider, keys of that workspace and of another; plus history rows made to measure."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

import pytest

from agents.models import StatsSample
from tests.factories.accounts import UserFactory
from tests.factories.agents import AgentFactory, WorkspaceAgentFactory
from tests.factories.workspaces import MembershipFactory, WorkspaceFactory, make_api_key
from tests.support import client_for


@dataclass
class AgentTenancy:
    agent: object
    workspace: object
    users: dict = field(default_factory=dict)
    keys: dict = field(default_factory=dict)  # caller name -> raw key

    def client(self, caller: str):
        if caller == "anonymous":
            return client_for()
        if caller in self.keys:
            return client_for(api_key=self.keys[caller])
        return client_for(self.users[caller])


@pytest.fixture
def tenancy(db) -> AgentTenancy:
    owner = UserFactory()
    agent = AgentFactory(owner=owner)
    workspace = WorkspaceFactory(owner=owner)
    WorkspaceAgentFactory(workspace=workspace, agent=agent)
    other_workspace = WorkspaceFactory(owner=owner)
    tenancy = AgentTenancy(agent=agent, workspace=workspace)
    tenancy.users["owner"] = owner
    tenancy.users["viewer"] = MembershipFactory(workspace=workspace, role="viewer").user
    tenancy.users["outsider"] = UserFactory()
    tenancy.keys["key_agents_read"] = make_api_key(workspace=workspace, scopes=["agents:read"])[1]
    tenancy.keys["key_workspaces_read"] = make_api_key(workspace=workspace, scopes=["workspaces:read"])[1]
    tenancy.keys["key_other_workspace"] = make_api_key(workspace=other_workspace, scopes=["agents:read"])[1]
    return tenancy


def make_samples(agent, *, start: datetime, count: int, every: timedelta = timedelta(seconds=10), **values):
    """`count` history rows of `agent`, `every` apart from `start`; sample i has
    cpu_percent i, pids i and counters 10 x i unless `values` says otherwise."""
    rows = [
        StatsSample(
            agent=agent,
            recorded_at=start + i * every,
            cpu_percent=values.get("cpu_percent", float(i)),
            memory_usage_mb=values.get("memory_usage_mb", 100.0),
            memory_limit_mb=values.get("memory_limit_mb", 512.0),
            memory_percent=values.get("memory_percent", 100.0 / 512.0 * 100.0),
            network_rx_mb=values.get("network_rx_mb", 10.0 * i),
            network_tx_mb=values.get("network_tx_mb", 5.0 * i),
            disk_read_mb=values.get("disk_read_mb", 2.0 * i),
            disk_write_mb=values.get("disk_write_mb", 1.0 * i),
            pids=values.get("pids", i),
        )
        for i in range(count)
    ]
    StatsSample.objects.bulk_create(rows, batch_size=5000)
    return rows
