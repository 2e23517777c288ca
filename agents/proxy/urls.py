"""Gateway proxy routes of Fleet's own API, relative to /api/ (the proxied origins themselves
are served by agents.proxy.app, before Django)."""

from django.urls import path

from .api import AgentGatewaySessionApi

urlpatterns = [
    path("agents/<uuid:agent_id>/gateway/session", AgentGatewaySessionApi.as_view(), name="agent-gateway-session"),
]
