"""GET /agents/:id/stats and GET /agents/:id/stats/history (viewer; keys need agents:read)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from agents.permissions import AgentReader
from fleet.api.views import ApiView

from .selectors import stats_history_list, stats_snapshot_get
from .serializers import StatsRecordOut, StatsSnapshotOut
from .window import DEFAULT_RANGE, RANGES, window_from_query


class AgentStatsApi(ApiView):
    documented_errors = (409, 502)
    access = {"GET": (AgentReader,)}

    @extend_schema(summary="One live stats snapshot of the agent's container", responses=StatsSnapshotOut)
    def get(self, request, agent_id):
        return Response(StatsSnapshotOut(stats_snapshot_get(agent=request.agent_access.agent)).data)


class AgentStatsHistoryApi(ApiView):
    access = {"GET": (AgentReader,)}

    @extend_schema(
        summary="Stats history of the agent, oldest first, at most 2000 records",
        parameters=[
            OpenApiParameter("range", str, enum=list(RANGES), default=DEFAULT_RANGE),
            OpenApiParameter("from", str, description="ISO 8601; together with `to`"),
            OpenApiParameter("to", str, description="ISO 8601; together with `from`"),
        ],
        responses=StatsRecordOut(many=True),
    )
    def get(self, request, agent_id):
        window = window_from_query(request.query_params)
        # As read (a serializer costs too much here): see StatsRecordOut.
        return Response(stats_history_list(agent=request.agent_access.agent, window=window))
