"""Usage and cost routes, relative to /api/ (no trailing slash). `workspaces/cost` is a fixed
path, so it never clashes with the `workspaces/<uuid>` routes."""

from django.urls import path

from .api import AgentUsageApi, AgentUsagePullApi, WorkspaceCostApi

urlpatterns = [
    path("agents/<uuid:agent_id>/usage", AgentUsageApi.as_view(), name="agent-usage"),
    path("agents/<uuid:agent_id>/usage/pull", AgentUsagePullApi.as_view(), name="agent-usage-pull"),
    path("workspaces/cost", WorkspaceCostApi.as_view(), name="workspace-cost"),
]
