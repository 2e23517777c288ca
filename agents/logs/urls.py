"""Logs routes, relative to /api/ (no trailing slash)."""

from django.urls import path

from .api import AgentLogsApi

urlpatterns = [
    path("agents/<uuid:agent_id>/logs", AgentLogsApi.as_view(), name="agent-logs"),
]
