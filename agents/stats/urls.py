"""Stats routes, relative to /api/ (no trailing slash)."""

from django.urls import path

from .api import AgentStatsApi, AgentStatsHistoryApi

urlpatterns = [
    path("agents/<uuid:agent_id>/stats", AgentStatsApi.as_view(), name="agent-stats"),
    path("agents/<uuid:agent_id>/stats/history", AgentStatsHistoryApi.as_view(), name="agent-stats-history"),
]
