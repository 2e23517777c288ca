"""Routes under /api/ (paths have no trailing slash, as in the spec)."""

from django.urls import path

from . import api

urlpatterns = [
    path("workspaces/<uuid:workspace_id>/alert-rules", api.AlertRuleListApi.as_view(), name="alert-rules"),
    path(
        "workspaces/<uuid:workspace_id>/alert-rules/<uuid:rule_id>",
        api.AlertRuleDetailApi.as_view(),
        name="alert-rule",
    ),
    path(
        "workspaces/<uuid:workspace_id>/alert-rules/<uuid:rule_id>/test",
        api.AlertRuleTestApi.as_view(),
        name="alert-rule-test",
    ),
    path("workspaces/<uuid:workspace_id>/events", api.WorkspaceEventListApi.as_view(), name="workspace-events"),
]
