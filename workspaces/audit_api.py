"""GET /api/workspaces/:id/audit: the audit rows of one workspace, for its admins (sessions only:
a workspace API key never reads the audit log). The list and export are audit's own view."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema

from audit.api import AuditLogView
from audit.serializers import AuditPageOut, AuditQuery

from .access import WorkspaceRole
from .roles import Role


class WorkspaceAuditListApi(AuditLogView):
    access = {"GET": (WorkspaceRole(Role.ADMIN, session_only=True),)}

    def workspace_of(self, kwargs):
        return kwargs["workspace_id"]

    @extend_schema(parameters=[AuditQuery], responses=AuditPageOut,
                   description="Newest first, filtered; `format=csv|json` streams the whole selection.")
    def get(self, request, workspace_id):
        """The workspace's audit log"""
        return self.answer(request, workspace_id=workspace_id)
