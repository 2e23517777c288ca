"""Access to the nemoclaw routes: the agent's own rules (agents.permissions) first, so a caller
who may not see the agent gets its 404/403, then 400 not_sandboxed for a standard agent."""

from __future__ import annotations

from rest_framework.permissions import BasePermission

from agents.models import SandboxProfile
from agents.permissions import AgentOperator, AgentReader

from .errors import NotSandboxed


class Sandboxed(BasePermission):
    def has_permission(self, request, view):
        if request.agent_access.agent.sandbox_profile != SandboxProfile.NEMOCLAW:
            raise NotSandboxed()
        return True


SandboxReader = (AgentReader, Sandboxed)
SandboxOperator = (AgentOperator, Sandboxed)
