"""Every workspace route against every kind of caller: who gets what status and code."""

from __future__ import annotations

import pytest

from tests.factories.accounts import UserFactory
from tests.factories.workspaces import make_api_key, make_member
from workspaces.models import ApiKey, Invitation, Membership, Workspace
from workspaces.roles import Role
from workspaces.services import invitation_create

SESSION_CALLERS = ("owner", "admin", "editor", "viewer", "outsider", "platform_admin")
KEY_CALLERS = ("key:agents:read", "key:agents:write", "key:workspaces:read")  # each a key of the workspace
ALL_CALLERS = SESSION_CALLERS + KEY_CALLERS + ("anonymous",)

OK, CREATED, ACCEPTED = (200, None), (201, None), (202, None)
NOT_FOUND = (404, "not_found")
DENIED = (403, "permission_denied")
NO_SCOPE = (403, "missing_scope")
SESSION = (403, "session_required")
ANON = (401, "not_authenticated")
KEYS_REFUSED = {caller: SESSION for caller in KEY_CALLERS}
AGENT_KEYS_REFUSED = {"key:agents:read": NO_SCOPE, "key:agents:write": NO_SCOPE}  # no workspaces:read


def _expect(**overrides):
    """Start from 'every member may', then override per caller."""
    table = {c: OK for c in ALL_CALLERS}
    table["anonymous"] = ANON
    table.update(overrides)
    return table


def _targets(tenancy) -> dict:
    workspace = tenancy.workspace
    return {
        "ws": workspace.id,
        "newcomer": UserFactory(email="newcomer@example.com"),
        "member": make_member(workspace, Role.VIEWER),
        "key": make_api_key(workspace=workspace, scopes=["agents:read"], name="target")[0],
        # To an address none of the callers has: only its invitee may read, accept or decline it.
        "invitation": invitation_create(workspace=workspace, invited_by=workspace.owner, acting_role=Role.OWNER,
                                        email="invitee@example.com", role=Role.EDITOR),
    }


ROUTES = {
    "list workspaces": (
        "get", lambda t: "/api/workspaces", None,
        _expect(**AGENT_KEYS_REFUSED),
    ),
    "create workspace": (
        "post", lambda t: "/api/workspaces", lambda t: {"name": "New"},
        _expect(**{c: CREATED for c in ("owner", "admin", "editor", "viewer", "outsider", "platform_admin")},
                **KEYS_REFUSED),
    ),
    "get workspace": (
        "get", lambda t: f"/api/workspaces/{t['ws']}", None,
        _expect(outsider=NOT_FOUND, **AGENT_KEYS_REFUSED),
    ),
    "delete workspace": (
        "delete", lambda t: f"/api/workspaces/{t['ws']}", None,
        _expect(admin=DENIED, editor=DENIED, viewer=DENIED, outsider=NOT_FOUND, platform_admin=DENIED,
                **KEYS_REFUSED),
    ),
    "list members": (
        "get", lambda t: f"/api/workspaces/{t['ws']}/members", None,
        _expect(outsider=NOT_FOUND, **AGENT_KEYS_REFUSED),
    ),
    "add member": (
        "post", lambda t: f"/api/workspaces/{t['ws']}/members",
        lambda t: {"email": t["newcomer"].email, "role": "editor"},
        _expect(owner=ACCEPTED, admin=ACCEPTED, platform_admin=ACCEPTED, editor=DENIED, viewer=DENIED,
                outsider=NOT_FOUND, **KEYS_REFUSED),
    ),
    "list invitations": (
        "get", lambda t: f"/api/workspaces/{t['ws']}/invitations", None,
        _expect(editor=DENIED, viewer=DENIED, outsider=NOT_FOUND, **KEYS_REFUSED),
    ),
    "withdraw invitation": (
        "delete", lambda t: f"/api/workspaces/{t['ws']}/invitations/{t['invitation'].id}", None,
        _expect(editor=DENIED, viewer=DENIED, outsider=NOT_FOUND, **KEYS_REFUSED),
    ),
    "my invitations": (
        "get", lambda t: "/api/invitations", None,
        _expect(**KEYS_REFUSED),
    ),
    "accept invitation": (
        "post", lambda t: f"/api/invitations/{t['invitation'].id}/accept", None,
        _expect(**{c: NOT_FOUND for c in SESSION_CALLERS}, **KEYS_REFUSED),
    ),
    "decline invitation": (
        "delete", lambda t: f"/api/invitations/{t['invitation'].id}", None,
        _expect(**{c: NOT_FOUND for c in SESSION_CALLERS}, **KEYS_REFUSED),
    ),
    "change member role": (
        "patch", lambda t: f"/api/workspaces/{t['ws']}/members/{t['member'].id}", lambda t: {"role": "editor"},
        _expect(editor=DENIED, viewer=DENIED, outsider=NOT_FOUND, **KEYS_REFUSED),
    ),
    "remove member": (
        "delete", lambda t: f"/api/workspaces/{t['ws']}/members/{t['member'].id}", None,
        _expect(editor=DENIED, viewer=DENIED, outsider=NOT_FOUND, **KEYS_REFUSED),
    ),
    "list api keys": (
        "get", lambda t: f"/api/workspaces/{t['ws']}/api-keys", None,
        _expect(editor=DENIED, viewer=DENIED, outsider=NOT_FOUND, **KEYS_REFUSED),
    ),
    "create api key": (
        "post", lambda t: f"/api/workspaces/{t['ws']}/api-keys", lambda t: {"name": "ci", "scopes": ["agents:read"]},
        # A platform admin who is not a member would mint a key that can never work.
        _expect(owner=CREATED, admin=CREATED, editor=DENIED, viewer=DENIED, outsider=NOT_FOUND,
                platform_admin=DENIED, **KEYS_REFUSED),
    ),
    "revoke api key": (
        "delete", lambda t: f"/api/workspaces/{t['ws']}/api-keys/{t['key'].id}", None,
        _expect(editor=DENIED, viewer=DENIED, outsider=NOT_FOUND, **KEYS_REFUSED),
    ),
}

CASES = [
    pytest.param(route, caller, id=f"{route}-{caller}") for route in ROUTES for caller in ALL_CALLERS
]


@pytest.mark.parametrize(("route", "caller"), CASES)
def test_each_caller_gets_the_status_the_rules_give(tenancy, route, caller):
    method, path, body, expected = ROUTES[route]
    targets = _targets(tenancy)
    kwargs = {"format": "json"} if body else {}
    if body:
        kwargs["data"] = body(targets)
    response = getattr(tenancy.client(caller), method)(path(targets), **kwargs)

    status, code = expected[caller]
    assert response.status_code == status, response.content
    if code:
        assert response.json()["code"] == code


def _state(tenancy, targets) -> tuple:
    workspace = tenancy.workspace
    return (
        Workspace.objects.filter(pk=workspace.pk).exists(),
        sorted(Membership.objects.filter(workspace=workspace).values_list("user_id", "role")),
        ApiKey.objects.filter(pk=targets["key"].pk, revoked_at__isnull=True).exists(),
        ApiKey.objects.filter(workspace=workspace).count(),
        Workspace.objects.count(),
        sorted(Invitation.objects.filter(workspace=workspace).values_list("email", "role")),
    )


REFUSED_WRITES = [
    (route, caller)
    for route, (method, _path, _body, expected) in ROUTES.items()
    if method != "get"
    for caller in ALL_CALLERS
    if expected[caller][0] >= 400
]


@pytest.mark.parametrize(("route", "caller"), [pytest.param(r, c, id=f"{r}-{c}") for r, c in REFUSED_WRITES])
def test_a_refused_write_changes_nothing(tenancy, route, caller):
    method, path, body, _expected = ROUTES[route]
    targets = _targets(tenancy)
    client = tenancy.client(caller)  # before the snapshot: a key caller's key is made here
    before = _state(tenancy, targets)
    kwargs = {"format": "json", "data": body(targets)} if body else {}
    getattr(client, method)(path(targets), **kwargs)
    assert _state(tenancy, targets) == before
