"""Access to one agent, declared on a view like workspaces.access.WorkspaceRole: `AgentRole`
resolves the agent of the URL's `agent_id` and the caller's role on it once (404 when the
caller may not see it, 403 when the role is too low) and leaves it on `request.agent_access`."""

from __future__ import annotations

from rest_framework.permissions import BasePermission

from fleet.api.permissions import principal_of
from workspaces.roles import Role

from .selectors import agent_access, agent_access_for_owner


def AgentRole(min_role: Role = Role.VIEWER) -> type[BasePermission]:  # noqa: N802 - used like a class
    """Viewers read; editors operate. A key needs agents:read or agents:write to match."""

    class _AgentRole(BasePermission):
        def has_permission(self, request, view):
            request.agent_access = agent_access(principal_of(request), view.kwargs["agent_id"], min_role=min_role)
            return True

    _AgentRole.__name__ = f"AgentRole[{min_role.label}]"
    return _AgentRole


class AgentOwner(BasePermission):
    """Only the agent's direct owner (deleting it)."""

    def has_permission(self, request, view):
        request.agent_access = agent_access_for_owner(principal_of(request), view.kwargs["agent_id"])
        return True


AgentReader = AgentRole(Role.VIEWER)
AgentOperator = AgentRole(Role.EDITOR)  # editors of an assigned workspace operate agents
