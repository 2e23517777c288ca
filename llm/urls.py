"""Routes under /api/ (paths have no trailing slash, as in the spec)."""

from django.urls import path

from . import api

WORKSPACE = "workspaces/<uuid:workspace_id>/llm/keys"

urlpatterns = [
    # The sandbox's route, older than the store: one key per provider, a view of the user's keys.
    path("auth/provider-keys/<str:provider>", api.SandboxProviderKeyApi.as_view(), name="auth-provider-key"),
    path("llm/providers", api.ProvidersApi.as_view(), name="llm-providers"),
    path("llm/keys", api.UserKeysApi.as_view(), name="llm-keys"),
    path("llm/keys/<uuid:llm_key_id>", api.UserKeyDetailApi.as_view(), name="llm-key"),
    path("llm/keys/<uuid:llm_key_id>/test", api.UserKeyTestApi.as_view(), name="llm-key-test"),
    path(WORKSPACE, api.WorkspaceKeysApi.as_view(), name="workspace-llm-keys"),
    path(f"{WORKSPACE}/<uuid:llm_key_id>", api.WorkspaceKeyDetailApi.as_view(), name="workspace-llm-key"),
    path(f"{WORKSPACE}/<uuid:llm_key_id>/test", api.WorkspaceKeyTestApi.as_view(), name="workspace-llm-key-test"),
]
