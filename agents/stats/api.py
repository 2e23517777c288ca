"""GET /agents/:id/stats and GET /agents/:id/stats/history (viewer; keys need agents:read)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.selectors import agent_for
from fleet.api.permissions import principal_of

from .selectors import stats_history_list, stats_snapshot_get
from .window import DEFAULT_RANGE, RANGES, window_from_query


class AgentStatsApi(APIView):
    @extend_schema(summary="One live stats snapshot of the agent's container", responses=dict)
    def get(self, request, agent_id):
        agent = agent_for(principal_of(request), agent_id)
        return Response(stats_snapshot_get(agent=agent))


class AgentStatsHistoryApi(APIView):
    @extend_schema(
        summary="Stats history of the agent, oldest first, at most 2000 records",
        parameters=[
            OpenApiParameter("range", str, enum=list(RANGES), default=DEFAULT_RANGE),
            OpenApiParameter("from", str, description="ISO 8601; together with `to`"),
            OpenApiParameter("to", str, description="ISO 8601; together with `from`"),
        ],
        responses=dict,
    )
    def get(self, request, agent_id):
        agent = agent_for(principal_of(request), agent_id)
        window = window_from_query(request.query_params)
        return Response(stats_history_list(agent=agent, window=window))
