"""The permission layer other apps build on: workspace_access, WorkspaceRole and the selectors."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.response import Response
from rest_framework.test import APIRequestFactory, force_authenticate
from rest_framework.views import APIView

from fleet.api.principal import API_KEY, Principal
from fleet.errors import Forbidden, MissingScope, NotFound, SessionRequired, WrongWorkspace
from tests.factories.accounts import AdminFactory, UserFactory
from tests.factories.workspaces import WorkspaceFactory, make_member
from workspaces.access import (
    WorkspaceRole,
    workspace_access,
    workspace_roles,
    workspaces_visible_to,
)
from workspaces.roles import Role, Scope, role_of_key

pytestmark = pytest.mark.django_db


def session(user) -> Principal:
    return Principal(user=user)


def key_principal(workspace, *scopes) -> Principal:
    return Principal(user=workspace.owner, kind=API_KEY, api_key_id=uuid.uuid4(), workspace_id=workspace.id,
                     scopes=frozenset(scopes), issuer_role="owner")


@pytest.mark.parametrize("role", list(Role))
def test_a_member_acts_with_their_role(role):
    workspace = WorkspaceFactory()
    user = workspace.owner if role is Role.OWNER else make_member(workspace, role)

    access = workspace_access(session(user), workspace.id)

    assert (access.workspace, access.role, access.is_member) == (workspace, role, True)


def test_a_member_below_the_routes_role_gets_permission_denied():
    workspace = WorkspaceFactory()
    viewer = make_member(workspace, Role.VIEWER)

    with pytest.raises(Forbidden) as raised:
        workspace_access(session(viewer), workspace.id, min_role=Role.EDITOR)
    assert raised.value.code == "permission_denied"


@pytest.mark.parametrize("workspace_id", ["outsider", "missing", "not-a-uuid", None])
def test_no_role_or_no_workspace_is_not_found(workspace_id):
    workspace = WorkspaceFactory()
    target = {"outsider": workspace.id, "missing": uuid.uuid4()}.get(workspace_id, workspace_id)

    with pytest.raises(NotFound):
        workspace_access(session(UserFactory()), target)


def test_a_platform_admin_acts_as_admin_where_not_a_member_and_never_as_owner():
    workspace = WorkspaceFactory()
    admin = AdminFactory()

    access = workspace_access(session(admin), workspace.id, min_role=Role.ADMIN)

    assert (access.role, access.is_member) == (Role.ADMIN, False)
    with pytest.raises(Forbidden):
        workspace_access(session(admin), workspace.id, min_role=Role.OWNER)


def test_a_platform_admin_who_is_a_viewer_member_still_acts_as_admin():
    workspace = WorkspaceFactory()
    admin = make_member(workspace, Role.VIEWER, user=AdminFactory())

    assert workspace_access(session(admin), workspace.id).role is Role.ADMIN
    assert workspace_roles(session(admin)) == {workspace.id: Role.ADMIN}


def test_a_platform_admin_who_owns_a_workspace_stays_owner():
    admin = AdminFactory()
    workspace = WorkspaceFactory(owner=admin)

    assert workspace_access(session(admin), workspace.id).role is Role.OWNER


def test_a_key_is_refused_on_session_only_routes_before_any_lookup():
    workspace = WorkspaceFactory()

    with CaptureQueriesContext(connection) as queries, pytest.raises(SessionRequired):
        workspace_access(key_principal(workspace, Scope.AGENTS_WRITE), uuid.uuid4(), session_only=True)
    assert len(queries) == 0


def test_a_key_against_another_existing_workspace_is_wrong_workspace():
    workspace, other = WorkspaceFactory(), WorkspaceFactory()

    with pytest.raises(WrongWorkspace):
        workspace_access(key_principal(workspace, Scope.AGENTS_READ), other.id)


def test_a_key_against_a_missing_workspace_is_not_found():
    with pytest.raises(NotFound):
        workspace_access(key_principal(WorkspaceFactory(), Scope.AGENTS_READ), uuid.uuid4())


def test_a_key_without_the_routes_scope_is_missing_scope():
    workspace = WorkspaceFactory()

    with pytest.raises(MissingScope):
        workspace_access(key_principal(workspace, Scope.AGENTS_READ), workspace.id, key_scope=Scope.AGENTS_WRITE)


def test_a_key_with_the_routes_scope_gets_the_routes_role():
    workspace = WorkspaceFactory()
    principal = key_principal(workspace, Scope.AGENTS_WRITE)

    access = workspace_access(principal, workspace.id, min_role=Role.ADMIN, key_scope=Scope.AGENTS_WRITE)

    assert access.role is Role.ADMIN


def test_a_key_without_a_named_scope_is_held_to_the_role_its_scopes_give():
    workspace = WorkspaceFactory()

    assert workspace_access(key_principal(workspace, Scope.AGENTS_WRITE), workspace.id, min_role=Role.EDITOR).role \
        is Role.EDITOR
    with pytest.raises(MissingScope):
        workspace_access(key_principal(workspace, Scope.AGENTS_READ), workspace.id, min_role=Role.EDITOR)
    with pytest.raises(MissingScope):
        workspace_access(key_principal(workspace), workspace.id)


def test_role_of_key_maps_scopes_to_roles():
    assert role_of_key({Scope.AGENTS_WRITE}) is Role.EDITOR
    assert role_of_key({Scope.AGENTS_READ}) is Role.VIEWER
    assert role_of_key({Scope.WORKSPACES_READ}) is Role.VIEWER
    assert role_of_key(set()) is None


def test_a_session_resolves_access_in_one_query():
    workspace = WorkspaceFactory()
    viewer = make_member(workspace, Role.VIEWER)

    with CaptureQueriesContext(connection) as queries:
        workspace_access(session(viewer), workspace.id)

    assert len(queries) == 1


def test_visible_workspaces_are_memberships_and_a_keys_own_workspace():
    user = UserFactory()
    owned, joined, foreign = WorkspaceFactory(owner=user), WorkspaceFactory(), WorkspaceFactory()
    make_member(joined, Role.EDITOR, user=user)

    assert set(workspaces_visible_to(session(user))) == {owned, joined}
    assert list(workspaces_visible_to(key_principal(foreign, Scope.AGENTS_READ))) == [foreign]
    assert workspace_roles(session(user)) == {owned.id: Role.OWNER, joined.id: Role.EDITOR}
    assert workspace_roles(key_principal(foreign, Scope.AGENTS_WRITE)) == {foreign.id: Role.EDITOR}
    with pytest.raises(WrongWorkspace):
        workspace_access(key_principal(foreign, Scope.AGENTS_WRITE), owned.id)


class _EditorOnly(APIView):
    permission_classes = [WorkspaceRole(Role.EDITOR)]

    def get(self, request, workspace_id):
        return Response({"role": request.workspace_access.role.label})


def test_the_workspace_role_permission_leaves_the_access_on_the_request():
    workspace = WorkspaceFactory()
    editor, viewer = make_member(workspace, Role.EDITOR), make_member(workspace, Role.VIEWER)
    factory = APIRequestFactory()

    def call(user):
        request = factory.get("/")
        force_authenticate(request, user=user, token=session(user))
        return _EditorOnly.as_view()(request, workspace_id=workspace.id)

    assert call(editor).data == {"role": "editor"}
    assert call(viewer).status_code == 403
