"""Routes under /api/ (paths have no trailing slash, as in the spec)."""

from django.urls import path

from . import api

AGENT = "agents/<uuid:agent_id>/integrations"

urlpatterns = [
    path("integrations/catalog", api.CatalogApi.as_view(), name="integration-catalog"),
    path("integrations/oauth/result", api.OAuthResultApi.as_view(), name="integration-oauth-result"),
    path("integrations/<str:provider>/oauth/callback", api.OAuthCallbackApi.as_view(),
         name="integration-oauth-callback"),
    path(AGENT, api.AgentIntegrationsApi.as_view(), name="agent-integrations"),
    path(f"{AGENT}/sync", api.AgentIntegrationSyncApi.as_view(), name="agent-integrations-sync"),
    path(f"{AGENT}/oauth/<str:provider>/start", api.OAuthStartApi.as_view(), name="agent-integration-oauth-start"),
    path(f"{AGENT}/<uuid:integration_id>", api.AgentIntegrationDetailApi.as_view(), name="agent-integration"),
    path(f"{AGENT}/<uuid:integration_id>/test", api.AgentIntegrationTestApi.as_view(), name="agent-integration-test"),
]
