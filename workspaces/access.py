"""The one permission layer for workspace-scoped routes.

Every view that acts inside a workspace calls `workspace_access()` (or uses the
`WorkspaceRole` permission); every queryset that lists workspaces comes from
`workspaces_visible_to()`. Nothing filters by hand.

Rules:
- a session acts with its membership role; a platform admin who is not a member acts
  as `admin` (sees and manages, never owns);
- an API key acts only inside its bound workspace (another workspace: 403 wrong_workspace)
  and only with the scope the route names (403 missing_scope); its issuer must still be a
  member (checked when the key is verified);
- a caller with no role in the workspace gets 404 not_found, a member below the route's
  role 403 permission_denied.
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from django.db.models import QuerySet
from rest_framework.permissions import BasePermission

from fleet.api.errors import Forbidden, MissingScope, NotFound, SessionRequired, WrongWorkspace
from fleet.api.permissions import principal_of
from fleet.api.principal import Principal

from .models import Membership, Workspace
from .roles import Role, role_of_key


@dataclass(frozen=True)
class WorkspaceAccess:
    workspace: Workspace
    role: Role


def _parse_uuid(value) -> UUID | None:
    try:
        return value if isinstance(value, UUID) else UUID(str(value))
    except (TypeError, ValueError):
        return None


def workspace_roles(principal: Principal) -> dict[UUID, Role]:
    """Workspace id -> the principal's role there, for every workspace it may see (one query)."""
    if principal.is_api_key:
        role = role_of_key(principal.scopes)
        return {principal.workspace_id: role} if role else {}
    rows = Membership.objects.filter(user_id=principal.user.pk).values_list("workspace_id", "role")
    return {workspace_id: Role.parse(role) for workspace_id, role in rows}


def role_in_workspace(principal: Principal, workspace_id) -> Role | None:
    workspace_id = _parse_uuid(workspace_id)
    if workspace_id is None:
        return None
    if principal.is_api_key:
        return role_of_key(principal.scopes) if workspace_id == principal.workspace_id else None
    role = (
        Membership.objects.filter(user_id=principal.user.pk, workspace_id=workspace_id)
        .values_list("role", flat=True)
        .first()
    )
    if role:
        return Role.parse(role)
    if principal.is_platform_admin and Workspace.objects.filter(pk=workspace_id).exists():
        return Role.ADMIN
    return None


def workspaces_visible_to(principal: Principal) -> QuerySet[Workspace]:
    """Workspaces where the principal is a member (a key: only its own workspace)."""
    if principal.is_api_key:
        return Workspace.objects.filter(pk=principal.workspace_id)
    return Workspace.objects.filter(memberships__user_id=principal.user.pk)


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
    """
    if principal.is_api_key:
        if session_only:
            raise SessionRequired()
        workspace_uuid = _parse_uuid(workspace_id)
        if workspace_uuid != principal.workspace_id:
            if workspace_uuid is None or not Workspace.objects.filter(pk=workspace_uuid).exists():
                raise NotFound("Workspace not found.")
            raise WrongWorkspace()
        if key_scope is not None and not principal.has_scope(key_scope):
            raise MissingScope(f"The API key lacks the scope '{key_scope}'.")
    role = role_in_workspace(principal, workspace_id)
    if role is None:
        raise NotFound("Workspace not found.")
    workspace = Workspace.objects.filter(pk=workspace_id).first()
    if workspace is None:
        raise NotFound("Workspace not found.")
    if principal.is_api_key and key_scope is not None:
        return WorkspaceAccess(workspace, max(role, min_role))
    if role < min_role:
        raise Forbidden(f"This needs the role '{min_role.label}' in the workspace.")
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
