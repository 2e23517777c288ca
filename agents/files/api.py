"""GET/PUT/DELETE /agents/:id/files/<path>, GET /agents/:id/export, POST /agent-migrations.

Session only (a key is 403 session_required before any lookup); then access as for agents:
viewers read files, editors write them and export.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import FileResponse, HttpResponse
from django.http.multipartparser import MultiPartParserError
from django.utils.text import slugify
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response

from audit.requests import record_api_read
from fleet.api.bodies import declared_length, raw_body
from fleet.api.permissions import SessionOnly
from fleet.api.serializers import SuccessOut
from fleet.api.throttling import throttle
from fleet.api.views import ApiView
from fleet.errors import InvalidRequest, PayloadTooLarge

from ..backends.base import StatePath
from ..permissions import AgentOperator, AgentReader
from .drafts import migration_draft_create, migration_drafts_quota_check
from .export import agent_export
from .serializers import FileEntryOut, MigrationDraftOut
from .state import state_file_delete, state_file_write, state_path_read

OCTETS = "application/octet-stream"


class AgentFilesApi(ApiView):
    documented_errors = {"GET": (409, 413, 502), "PUT": (403, 409, 502), "DELETE": (409, 502)}
    access = {"GET": (SessionOnly, AgentReader), "PUT": (SessionOnly, AgentOperator),
              "DELETE": (SessionOnly, AgentOperator)}

    @extend_schema(responses={200: OpenApiResponse(FileEntryOut(many=True), description="a folder's entries; "
                                                   "a file answers its bytes (application/octet-stream)")})
    def get(self, request, agent_id, path: str):
        """Read a file of the agent's state, or list a folder."""
        found = state_path_read(agent=request.agent_access.agent, path=path)
        if isinstance(found, StatePath):
            return Response(FileEntryOut(found.entries, many=True).data)
        return HttpResponse(found, content_type=OCTETS)

    @extend_schema(request={OCTETS: OpenApiTypes.BINARY}, responses=SuccessOut)
    def put(self, request, agent_id, path: str):
        """Write a file of the agent's state (its folders created)."""
        data = raw_body(request, settings.AGENT_FILE_MAX_BYTES,
                        too_large=f"A file may be at most {settings.AGENT_FILE_MAX_BYTES} bytes.")
        state_file_write(agent=request.agent_access.agent, path=path, data=data)
        return Response(SuccessOut({"success": True}).data)

    @extend_schema(responses={200: SuccessOut})
    def delete(self, request, agent_id, path: str):
        """Delete a file or a folder of the agent's state."""
        state_file_delete(agent=request.agent_access.agent, path=path)
        return Response(SuccessOut({"success": True}).data)


class AgentFilesRootApi(ApiView):
    """`GET .../files/`: the state folder's root (writing needs a file's path)."""
    documented_errors = (409, 502)

    access = {"GET": (SessionOnly, AgentReader)}

    @extend_schema(operation_id="agent_files_root_list", responses=FileEntryOut(many=True))
    def get(self, request, agent_id):
        """List the top of the agent's state folder."""
        found = state_path_read(agent=request.agent_access.agent, path="")
        return Response(FileEntryOut(found.entries, many=True).data)


class AgentExportApi(ApiView):
    documented_errors = (409, 502)
    access = {"GET": (SessionOnly, AgentOperator)}

    @extend_schema(responses={(200, "application/gzip"): OpenApiTypes.BINARY})
    def get(self, request, agent_id):
        """Download the agent as a bundle: manifest and state, without secrets."""
        agent = request.agent_access.agent
        bundle = agent_export(agent=agent)  # whole before the answer starts: its failures are answers too
        record_api_read(request, action="agent.export", target_type="agent", target_id=agent.pk)  # a GET: no wrap
        filename = slugify(agent.name) or "agent"
        return FileResponse(bundle, content_type="application/gzip", as_attachment=True,
                            filename=f"{filename}.tar.gz")


class AgentMigrationsApi(ApiView):
    documented_errors = (409, 429, 503)
    access = {"POST": (SessionOnly,)}

    @extend_schema(
        request={"multipart/form-data": {"type": "object", "properties": {"bundle": {"type": "string",
                                                                                     "format": "binary"}},
                                         "required": ["bundle"]}},
        responses={201: MigrationDraftOut},
    )
    def post(self, request):
        """Upload an export bundle as a migration draft to deploy from (session only)."""
        user = self.principal.user
        # Before the body is read: each upload is a walk of up to 200 MB and a file on disk.
        throttle("migration-upload", user.pk, settings.MIGRATION_UPLOAD_RATE_PER_USER)
        migration_drafts_quota_check(user=user)
        limit = settings.MIGRATION_BUNDLE_MAX_BYTES
        if declared_length(request) > limit + 64 * 1024:  # the form's own bytes around the file
            raise PayloadTooLarge(f"A bundle may be at most {limit} bytes.")
        try:
            upload = request._request.FILES.get("bundle")
        except RequestDataTooBig:
            raise PayloadTooLarge("The form's fields beside the bundle are too large.") from None
        except (MultiPartParserError, SuspiciousOperation, ValueError):
            raise InvalidRequest("The body is not a valid multipart form.") from None
        if upload is None:
            raise InvalidRequest("Send the bundle as the multipart field 'bundle'.")
        if upload.size > limit:
            raise PayloadTooLarge(f"A bundle may be at most {limit} bytes.")
        draft = migration_draft_create(user=user, upload=upload, size=upload.size)
        return Response(MigrationDraftOut(draft).data, status=status.HTTP_201_CREATED)
