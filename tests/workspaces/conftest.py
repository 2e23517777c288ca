"""A tenancy: one workspace with a member of every role, an outsider, a platform admin,
and a key for each scope; plus `call()` to act as any of them by name."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from tests.factories.accounts import AdminFactory, UserFactory
from tests.factories.workspaces import WorkspaceFactory, make_api_key, make_member
from tests.support import client_for
from workspaces.roles import Role, Scope

SESSION_CALLERS = ("owner", "admin", "editor", "viewer", "outsider", "platform_admin")
KEY_CALLERS = ("key_agents_read", "key_agents_write", "key_workspaces_read")
ALL_CALLERS = SESSION_CALLERS + KEY_CALLERS + ("anonymous",)


@dataclass
class Tenancy:
    workspace: object
    users: dict = field(default_factory=dict)
    keys: dict = field(default_factory=dict)  # caller name -> (ApiKey, raw secret)

    def client(self, caller: str):
        if caller == "anonymous":
            return client_for()
        if caller in self.keys:
            return client_for(api_key=self.keys[caller][1])
        return client_for(self.users[caller])


@pytest.fixture
def tenancy(db) -> Tenancy:
    workspace = WorkspaceFactory(name="Tenancy")
    tenancy = Tenancy(workspace=workspace)
    tenancy.users["owner"] = workspace.owner
    for role in (Role.ADMIN, Role.EDITOR, Role.VIEWER):
        tenancy.users[role.label] = make_member(workspace, role)
    tenancy.users["outsider"] = UserFactory()
    tenancy.users["platform_admin"] = AdminFactory()
    for scope in Scope.ALL:
        name = "key_" + scope.replace(":", "_")
        tenancy.keys[name] = make_api_key(workspace=workspace, scopes=[scope], name=name)
    return tenancy
