"""GET /api/audit (platform admins): the whole audit log. The workspace's own log
(GET /api/workspaces/:id/audit) is this view with the workspace's access, in `workspaces`."""

from __future__ import annotations

from uuid import UUID

from drf_spectacular.utils import extend_schema
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.response import Response

from fleet.api.permissions import PlatformAdminOnly
from fleet.api.views import ApiView

from .export import audit_export
from .selectors import audit_entries, audit_page
from .serializers import AuditPageOut, AuditQuery


class FormatIsOurs(DefaultContentNegotiation):
    """`?format=csv|json` picks the export here, not one of DRF's renderers."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class AuditLogView(ApiView):
    """The audit log's list and export; `workspace_of` narrows it."""

    content_negotiation_class = FormatIsOurs

    def workspace_of(self, kwargs) -> UUID | None:
        return None

    def answer(self, request, **kwargs):
        query = AuditQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        rows = audit_entries(workspace_id=self.workspace_of(kwargs), where=query.audit_filter())
        fmt = query.validated_data.get("format")
        if fmt:
            return audit_export(rows, fmt=fmt)
        items, next_cursor = audit_page(rows, cursor=query.validated_data.get("cursor", ""),
                                        limit=query.validated_data["limit"])
        return Response(AuditPageOut({"items": items, "nextCursor": next_cursor}).data)


class AuditListApi(AuditLogView):
    access = {"GET": (PlatformAdminOnly,)}

    @extend_schema(parameters=[AuditQuery], responses=AuditPageOut,
                   description="Newest first, filtered; `format=csv|json` streams the whole selection.")
    def get(self, request):
        """The audit log of the whole platform"""
        return self.answer(request)
