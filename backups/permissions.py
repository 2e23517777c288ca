"""Who may read an agent's backups: its editors; a workspace key with agents:read (a key's role
on agents comes from its scopes alone, agents.selectors.key_agent_role)."""

from __future__ import annotations

from rest_framework.permissions import BasePermission

from agents.selectors import agent_access
from fleet.api.permissions import principal_of
from workspaces.roles import Role


class BackupReader(BasePermission):
    def has_permission(self, request, view):
        principal = principal_of(request)
        min_role = Role.VIEWER if principal.is_api_key else Role.EDITOR
        request.agent_access = agent_access(principal, view.kwargs["agent_id"], min_role=min_role)
        return True
