"""Terminal routes, relative to /api/ (no trailing slash). The WebSocket itself is registered
with the edge (agents.apps), not here."""

from django.urls import path

from .api import AgentTerminalSessionApi

urlpatterns = [
    path("agents/<uuid:agent_id>/terminal/session", AgentTerminalSessionApi.as_view(), name="agent-terminal-session"),
]
