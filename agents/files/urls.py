"""Files, export and migration routes, relative to /api/ (no trailing slash but `files/`)."""

from django.urls import path

from .api import AgentExportApi, AgentFilesApi, AgentFilesRootApi, AgentMigrationsApi

urlpatterns = [
    path("agents/<uuid:agent_id>/files/", AgentFilesRootApi.as_view(), name="agent-files-root"),
    path("agents/<uuid:agent_id>/files/<path:path>", AgentFilesApi.as_view(), name="agent-files"),
    path("agents/<uuid:agent_id>/export", AgentExportApi.as_view(), name="agent-export"),
    path("agent-migrations", AgentMigrationsApi.as_view(), name="agent-migrations"),
]
