"""The model route, relative to /api/ (no trailing slash)."""

from django.urls import path

from .api import AgentModelApi

urlpatterns = [
    path("agents/<uuid:agent_id>/model", AgentModelApi.as_view(), name="agent-model"),
]
