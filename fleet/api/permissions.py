"""Kernel permissions: authenticated, session only, scope, platform admin.

Workspace roles live in workspaces.access; these are the pieces that need no app.
"""

from __future__ import annotations

from rest_framework.permissions import BasePermission

from fleet.errors import Forbidden, MissingScope, NotAuthenticated, SessionRequired

from .principal import Principal


def principal_of(request) -> Principal:
    principal = getattr(request, "auth", None)
    if not isinstance(principal, Principal):
        raise NotAuthenticated()
    return principal


class DenyAll(BasePermission):
    """Nobody: the default of a DRF view that declares no access (fleet.api.views.ApiView)."""

    def has_permission(self, request, view):
        return False


class IsAuthenticated(BasePermission):
    def has_permission(self, request, view):
        principal_of(request)
        return True


class SessionOnly(BasePermission):
    """Workspace API keys are refused with 403 session_required."""

    def has_permission(self, request, view):
        if principal_of(request).is_api_key:
            raise SessionRequired()
        return True


class PlatformAdminOnly(BasePermission):
    def has_permission(self, request, view):
        principal = principal_of(request)
        if principal.is_api_key:
            raise SessionRequired()
        if not principal.is_platform_admin:
            raise Forbidden("Only platform admins may do this.")
        return True


def require_scope(principal: Principal, scope: str) -> None:
    if not principal.has_scope(scope):
        raise MissingScope(f"The API key lacks the scope '{scope}'.")


def RequireScope(scope: str) -> type[BasePermission]:  # noqa: N802 - reads as a class in permission_classes
    """Permission class factory: keys need `scope`; sessions pass."""

    class _RequireScope(BasePermission):
        def has_permission(self, request, view):
            require_scope(principal_of(request), scope)
            return True

    _RequireScope.__name__ = f"RequireScope[{scope}]"
    return _RequireScope
