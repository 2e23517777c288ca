"""The one permission layer for workspace-scoped routes.

Every view that acts inside a workspace calls `workspace_access()` (or uses the
`WorkspaceRole` permission); every queryset that lists workspaces comes from
`workspaces_visible_to()` and every "role per workspace" map from `workspace_roles()`.
Nothing filters by hand.

Rules:
- a session acts with its membership role. A platform admin acts with at least `admin`
  in every workspace (member or not): operators must be able to step in anywhere, and a
  platform admin who happens to be a viewer member must not have less power there than
  in a workspace they never joined. They never become `owner` (only the creator is).
  Listings (`workspaces_visible_to`, `workspace_roles`) still show member workspaces only;
  a platform admin reaches any other workspace by its id.
- an API key acts only inside its bound workspace (another existing workspace: 403
  wrong_workspace) and only with the scope the route names (403 missing_scope). Its role
  comes from its scopes (`role_of_key`): `agents:write` acts as editor, any other scope as
  viewer. The verifier (`keys.principal_from_api_key`) already refused keys that are
  revoked or whose issuer left, and capped the scopes by the issuer's current role.
- a key on a session-only route gets 403 session_required before any lookup.
- a caller with no role in the workspace gets 404 not_found (the workspace's existence is
  not revealed), a member below the route's role 403 permission_denied.
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from django.db.models import Exists, OuterRef, QuerySet, Subquery
from rest_framework.permissions import BasePermission

from fleet.api.fields import uuid_or_none
from fleet.api.permissions import principal_of, require_scope
from fleet.api.principal import Principal
from fleet.compiled_query import CompiledRows
from fleet.errors import Forbidden, MissingScope, NotFound, SessionRequired, WrongWorkspace

from .models import Membership, Workspace
from .roles import Role, role_of_key, session_role

WORKSPACE_NOT_FOUND = "Workspace not found."


@dataclass(frozen=True)
class WorkspaceAccess:
    workspace: Workspace
    role: Role
    # False for a platform admin stepping into a workspace they do not belong to.
    is_member: bool = True


def _member_role_subquery(user_id):
    return Membership.objects.filter(workspace_id=OuterRef("pk"), user_id=user_id).values("role")[:1]


def _session_role(principal: Principal, member_role: str | None) -> Role | None:
    return session_role(principal, Role.parse(member_role) if member_role else None)


# Read on every GET /agents: compiled once, the same prepared statement for every caller.
_MEMBERSHIPS = CompiledRows(lambda user_id: Membership.objects.filter(user_id=user_id)
                            .values_list("workspace_id", "role"), UUID)


def workspace_roles(principal: Principal) -> dict[UUID, Role]:
    """Workspace id -> the principal's role there, for every workspace it lists (one query)."""
    if principal.is_api_key:
        role = role_of_key(principal.scopes)
        return {principal.workspace_id: role} if role else {}
    rows = _MEMBERSHIPS.rows(principal.user.pk)
    return {workspace_id: _session_role(principal, role) for workspace_id, role in rows}



def workspaces_visible_to(principal: Principal) -> QuerySet[Workspace]:
    """Workspaces the principal lists: its memberships (a key: only its own workspace).

    Filtered with EXISTS rather than a join, so callers can annotate counts over
    `memberships` without the filter narrowing them.
    """
    if principal.is_api_key:
        return Workspace.objects.filter(pk=principal.workspace_id)
    is_member = Membership.objects.filter(workspace_id=OuterRef("pk"), user_id=principal.user.pk)
    return Workspace.objects.filter(Exists(is_member))


def workspace_access(
    principal: Principal,
    workspace_id,
    *,
    min_role: Role = Role.VIEWER,
    key_scope: str | None = None,
    session_only: bool = False,
) -> WorkspaceAccess:
    """Resolve the workspace and the caller's role in it, or raise the right API error.

    `key_scope` is the scope an API key needs on this route; a key that has it passes
    whatever `min_role` says (the spec matches scopes to the role each route needs).
    Without `key_scope`, keys are held to `min_role` through the role their scopes give.
    Sessions ignore `key_scope`. One query for a session, at most two for a key.
    """
    workspace_uuid = uuid_or_none(workspace_id)
    if principal.is_api_key:
        if session_only:
            raise SessionRequired()
        return _key_access(principal, workspace_uuid, min_role=min_role, key_scope=key_scope)
    if workspace_uuid is None:
        raise NotFound(WORKSPACE_NOT_FOUND)
    workspace = (
        Workspace.objects.filter(pk=workspace_uuid)
        .annotate(member_role=Subquery(_member_role_subquery(principal.user.pk)))
        .first()
    )
    role = _session_role(principal, workspace.member_role) if workspace else None
    if role is None:
        raise NotFound(WORKSPACE_NOT_FOUND)
    if role < min_role:
        raise Forbidden(f"This needs the role '{min_role.label}' in the workspace.")
    return WorkspaceAccess(workspace, role, is_member=workspace.member_role is not None)


def _key_access(principal: Principal, workspace_uuid: UUID | None, *, min_role: Role, key_scope: str | None):
    if workspace_uuid != principal.workspace_id:
        if workspace_uuid is None or not Workspace.objects.filter(pk=workspace_uuid).exists():
            raise NotFound(WORKSPACE_NOT_FOUND)
        raise WrongWorkspace()
    if key_scope is not None:
        require_scope(principal, key_scope)
    workspace = Workspace.objects.filter(pk=workspace_uuid).first()
    if workspace is None:
        raise NotFound(WORKSPACE_NOT_FOUND)
    role = role_of_key(principal.scopes)
    if role is None:
        raise MissingScope("The API key has no scope left that allows anything here.")
    if key_scope is not None:
        # The scope matches the route's role, but never past the issuer's current role.
        issuer = Role.parse(principal.issuer_role) if principal.issuer_role else Role.VIEWER
        if issuer < min_role:
            raise Forbidden(f"The API key's issuer no longer holds the role '{min_role.label}' this route needs.")
        return WorkspaceAccess(workspace, min(max(role, min_role), issuer))
    if role < min_role:
        raise MissingScope(f"The API key's scopes do not give the role '{min_role.label}' this route needs.")
    return WorkspaceAccess(workspace, role)


def WorkspaceRole(  # noqa: N802 - used like a class in permission_classes
    min_role: Role,
    *,
    key_scope: str | None = None,
    session_only: bool = False,
    url_kwarg: str = "workspace_id",
) -> type[BasePermission]:
    """DRF permission: resolves access once and leaves it on `request.workspace_access`."""

    class _WorkspaceRole(BasePermission):
        def has_permission(self, request, view):
            request.workspace_access = workspace_access(
                principal_of(request),
                view.kwargs[url_kwarg],
                min_role=min_role,
                key_scope=key_scope,
                session_only=session_only,
            )
            return True

    _WorkspaceRole.__name__ = f"WorkspaceRole[{min_role.label}]"
    return _WorkspaceRole
