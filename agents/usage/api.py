"""POST /agents/:id/usage (the agent's ingest token, or agents:write) and GET /workspaces/cost."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from fleet.api.permissions import principal_of

from .cost import workspace_cost_report
from .selectors import agent_token_of, usage_agent_for
from .services import usage_ingest
from .validation import usage_events_parse
from .window import DEFAULT_DAYS, cost_window_from_query


class AgentUsageApi(APIView):
    # The agent's own token names no user: access is decided in usage_agent_for.
    permission_classes: list = []

    def perform_authentication(self, request):
        if agent_token_of(request):
            return  # no user credential may come with it (checked above); nothing to verify here
        super().perform_authentication(request)

    @extend_schema(
        summary="Report token usage (idempotent on request_id)",
        description="Body {events: [{request_id, model, provider, input_tokens, output_tokens, cost_usd?, "
                    "occurred_at?}]}, at most 1,000 events. Authenticated by X-Agent-Token or agents:write.",
        request=dict,
        responses=dict,
    )
    def post(self, request, agent_id):
        agent = usage_agent_for(request, agent_id)
        result = usage_ingest(agent=agent, events=usage_events_parse(request.data))
        return Response({"accepted": result.accepted, "duplicates": result.duplicates})


class WorkspaceCostApi(APIView):
    @extend_schema(
        summary="Token cost per workspace and agent",
        parameters=[
            OpenApiParameter("period_days", int, default=DEFAULT_DAYS, description="1 to 365 UTC days, today included"),
            OpenApiParameter("period_start", str, description="YYYY-MM-DD (UTC), with period_end; inclusive"),
            OpenApiParameter("period_end", str, description="YYYY-MM-DD (UTC), with period_start; inclusive"),
        ],
        responses=dict,
    )
    def get(self, request):
        principal = principal_of(request)
        window = cost_window_from_query(request.query_params, today=timezone.now().date())
        return Response(workspace_cost_report(principal=principal, window=window))
