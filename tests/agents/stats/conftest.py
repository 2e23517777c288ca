"""A tenancy around one agent: its owner, a viewer of the workspace it is shared to,
an outsider, keys of that workspace and of another; plus history rows made to measure."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from tests.factories.accounts import UserFactory
from tests.factories.agents import AgentFactory, WorkspaceAgentFactory
from tests.factories.workspaces import WorkspaceFactory, make_api_key, make_member
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
    tenancy.users["viewer"] = make_member(workspace, "viewer")
    tenancy.users["outsider"] = UserFactory()
    tenancy.keys["key_agents_read"] = make_api_key(workspace=workspace, scopes=["agents:read"])[1]
    tenancy.keys["key_workspaces_read"] = make_api_key(workspace=workspace, scopes=["workspaces:read"])[1]
    tenancy.keys["key_other_workspace"] = make_api_key(workspace=other_workspace, scopes=["agents:read"])[1]
    return tenancy

