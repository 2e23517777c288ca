"""Routes under /api/ (paths have no trailing slash, as in the spec).

The one place that lists the agents app's route modules: sub-features (stats, budgets, ...)
add their own `urlpatterns` module to ROUTE_MODULES.
"""

from importlib import import_module

from django.urls import path

from .api import agents, lifecycle, workspace_agents

ROUTE_MODULES: tuple[str, ...] = (
    "agents.stats.urls", "agents.usage.urls", "agents.budgets.urls", "agents.files.urls",
    "agents.logs.urls", "agents.chat.urls", "agents.proxy.urls", "agents.terminal.urls",
    "agents.targets.k8s_urls", "agents.llm_model.urls",
)

urlpatterns = [
    path("agents", agents.AgentListApi.as_view(), name="agent-list"),
    path("agents/deploy", agents.AgentDeployApi.as_view(), name="agent-deploy"),
    path("agents/adopt", agents.AgentAdoptApi.as_view(), name="agent-adopt"),
    path("agents/<uuid:agent_id>", lifecycle.AgentDetailApi.as_view(), name="agent-detail"),
    path("agents/<uuid:agent_id>/start", lifecycle.AgentStartApi.as_view(), name="agent-start"),
    path("agents/<uuid:agent_id>/stop", lifecycle.AgentStopApi.as_view(), name="agent-stop"),
    path("agents/<uuid:agent_id>/restart", lifecycle.AgentRestartApi.as_view(), name="agent-restart"),
    path("agents/<uuid:agent_id>/redeploy", lifecycle.AgentRedeployApi.as_view(), name="agent-redeploy"),
    path("agents/<uuid:agent_id>/gateway-url", lifecycle.AgentGatewayUrlApi.as_view(), name="agent-gateway-url"),
    path("workspaces/<uuid:workspace_id>/agents", workspace_agents.WorkspaceAgentListApi.as_view(),
         name="workspace-agent-list"),
    path("workspaces/<uuid:workspace_id>/agent-candidates", workspace_agents.WorkspaceAgentCandidatesApi.as_view(),
         name="workspace-agent-candidates"),
    path("workspaces/<uuid:workspace_id>/agents/<uuid:agent_id>", workspace_agents.WorkspaceAgentDetailApi.as_view(),
         name="workspace-agent-detail"),
]

for module_name in ROUTE_MODULES:
    urlpatterns += import_module(module_name).urlpatterns
