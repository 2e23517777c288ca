"""A tenancy for agent tests: an owner's agent shared into a workspace with every role around it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from agents.models import Agent, Status
from tests.factories.accounts import AdminFactory, UserFactory
from tests.factories.agents import AgentFactory, WorkspaceAgentFactory
from tests.factories.workspaces import WorkspaceFactory, make_api_key, make_member
from tests.support import client_for


@dataclass
class Tenancy:
    owner: object  # owns the agent directly (and is a viewer in the workspace)
    workspace: object
    workspace_owner: object
    admin: object
    editor: object
    viewer: object
    outsider: object
    platform_admin: object
    other_workspace: object

    def key(self, *scopes, workspace=None) -> str:
        workspace = workspace or self.workspace
        _, raw = make_api_key(workspace=workspace, created_by=workspace.owner, scopes=scopes)
        return raw

    def client(self, who: str):
        """A client for a named caller: a user attribute, 'key:<scope>,<scope>', 'other-key' or 'anonymous'."""
        if who == "anonymous":
            return client_for()
        if who == "other-key":
            return client_for(api_key=self.key("agents:read", "agents:write", workspace=self.other_workspace))
        if who.startswith("key:"):
            return client_for(api_key=self.key(*who[4:].split(",")))
        return client_for(getattr(self, who))


@pytest.fixture
def tenancy(db) -> Tenancy:
    workspace = WorkspaceFactory()
    other_workspace = WorkspaceFactory()
    owner = UserFactory()
    members = {}
    for role in ("admin", "editor", "viewer"):
        members[role] = make_member(workspace, role)
    make_member(workspace, "viewer", user=owner)
    return Tenancy(
        owner=owner,
        workspace=workspace,
        workspace_owner=workspace.owner,
        admin=members["admin"],
        editor=members["editor"],
        viewer=members["viewer"],
        outsider=UserFactory(),
        platform_admin=AdminFactory(),
        other_workspace=other_workspace,
    )


def shared_agent(tenancy: Tenancy, **fields) -> Agent:
    """An agent of tenancy.owner assigned to tenancy.workspace. Without a container by
    default, so routes answer without touching an engine."""
    fields.setdefault("status", Status.STOPPED)
    fields.setdefault("container_id", "")
    agent = AgentFactory(owner=tenancy.owner, **fields)
    WorkspaceAgentFactory(workspace=tenancy.workspace, agent=agent)
    return agent
