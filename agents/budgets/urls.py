"""Budget routes, relative to /api/ (no trailing slash)."""

from django.urls import path

from .api import AgentBudgetApi, AgentBudgetDetailApi

urlpatterns = [
    path("agents/<uuid:agent_id>/budget", AgentBudgetApi.as_view(), name="agent-budget"),
    path("agents/<uuid:agent_id>/budget/<uuid:budget_id>", AgentBudgetDetailApi.as_view(), name="agent-budget-detail"),
]
