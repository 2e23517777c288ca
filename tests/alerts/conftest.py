"""Alerts fixtures: a workspace with a member of every role, an outsider, and what would be published."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from accounts.models import User
from alerts import tasks
from tests.factories.accounts import AdminFactory, UserFactory
from tests.factories.workspaces import WorkspaceFactory, make_member
from workspaces.models import Workspace
from workspaces.roles import Role


@dataclass
class Tenancy:
    workspace: Workspace
    other_workspace: Workspace
    owner: User
    admin: User
    editor: User
    viewer: User
    outsider: User  # a member of other_workspace only
    platform_admin: User


@pytest.fixture(autouse=True)
def _alerts_test_settings(settings):
    # The real receivers of these tests listen on 127.0.0.1, which the outbound guard refuses.
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]


@pytest.fixture
def published(monkeypatch):
    """What would go to the broker: dispatch requests, and the deliveries given a deliver message."""
    sent = SimpleNamespace(dispatches=0, deliveries=[])

    def publish_dispatch(*args, **kwargs):
        sent.dispatches += 1

    monkeypatch.setattr(tasks.dispatch_deliveries, "apply_async", publish_dispatch)
    monkeypatch.setattr(tasks, "deliveries_publish", lambda ids, **kwargs: sent.deliveries.extend(ids))
    return sent


@pytest.fixture
def tenancy(db) -> Tenancy:
    workspace = WorkspaceFactory()
    other = WorkspaceFactory()
    members = {
        role: make_member(workspace, role.label)
        for role in (Role.ADMIN, Role.EDITOR, Role.VIEWER)
    }
    outsider = UserFactory()
    make_member(other, Role.ADMIN.label, user=outsider)
    return Tenancy(
        workspace=workspace,
        other_workspace=other,
        owner=workspace.owner,
        admin=members[Role.ADMIN],
        editor=members[Role.EDITOR],
        viewer=members[Role.VIEWER],
        outsider=outsider,
        platform_admin=AdminFactory(),
    )

