"""POST /agents/:id/usage (the agent's ingest token, or agents:write), POST /agents/:id/usage/pull
(editors; agents:write) and GET /workspaces/cost."""

from __future__ import annotations

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.permissions import BasePermission
from rest_framework.response import Response

from fleet.api.authentication import FleetAuthentication
from fleet.api.permissions import RequireScope
from fleet.api.throttling import throttle
from fleet.api.views import ApiView
from workspaces.roles import Scope

from ..permissions import AgentOperator
from .authentication import AgentCredential, AgentTokenAuthentication
from .cost import workspace_cost_report
from .pull import usage_pull
from .serializers import CostReportOut, UsageIngestOut, UsagePullOut
from .services import usage_ingest
from .validation import usage_events_parse
from .window import DEFAULT_DAYS, cost_window_from_query


class UsageReporter(BasePermission):
    """The agent itself (its token names the agent of the URL), or an operator of the agent."""

    def has_permission(self, request, view):
        if isinstance(request.auth, AgentCredential):
            request.reporting_agent = request.auth.agent
            return True
        AgentOperator().has_permission(request, view)
        request.reporting_agent = request.agent_access.agent
        return True


class AgentUsageApi(ApiView):
    request_examples = {
        "POST": {
            "One model call the runtime made": {
                "events": [
                    {
                        "request_id": "req-7f3a", "model": "gpt-4o-mini", "provider": "openai", "input_tokens": 1200,
                        "output_tokens": 310, "occurred_at": "2026-11-28T09:30:00Z",
                    },
                ],
            },
        },
    }
    documented_errors = (429, 503)
    audited = False  # metering a runtime reports, not a change (docs/audit.md)
    authentication_classes = [AgentTokenAuthentication, FleetAuthentication]
    access = {"POST": (UsageReporter,)}

    @extend_schema(
        summary="Report token usage (idempotent on request_id)",
        description="Body {events: [{request_id, model, provider, input_tokens, output_tokens, cost_usd?, "
                    "occurred_at?}]}, at most 1,000 events. Authenticated by X-Agent-Token or agents:write.",
        request=dict,
        responses=UsageIngestOut,
    )
    def post(self, request, agent_id):
        throttle("usage_report", request.reporting_agent.pk, settings.USAGE_REPORT_RATE_PER_AGENT,
                 when_cache_away="serve")
        result = usage_ingest(agent=request.reporting_agent, events=usage_events_parse(request.data))
        return Response(UsageIngestOut(result).data)


class AgentUsagePullApi(ApiView):
    documented_errors = (409, 502)
    access = {"POST": (AgentOperator,)}

    @extend_schema(
        summary="Pull token usage from the agent's runtime now",
        description="Records the runtime's cumulative figures of today and the two days before, beyond "
                    "what was already recorded (pushed events first), so nothing is counted twice. "
                    "409 agent_not_running unless the agent runs; 502 when its gateway fails.",
        request=None,
        responses=UsagePullOut,
    )
    def post(self, request, agent_id):
        return Response(UsagePullOut(usage_pull(agent=request.agent_access.agent)).data)


class WorkspaceCostApi(ApiView):
    access = {"GET": (RequireScope(Scope.WORKSPACES_READ),)}

    @extend_schema(
        summary="Token cost per workspace and agent",
        parameters=[
            OpenApiParameter("period_days", int, default=DEFAULT_DAYS, description="1 to 365 UTC days, today included"),
            OpenApiParameter("period_start", str, description="YYYY-MM-DD (UTC), with period_end; inclusive"),
            OpenApiParameter("period_end", str, description="YYYY-MM-DD (UTC), with period_start; inclusive"),
        ],
        responses=CostReportOut,
    )
    def get(self, request):
        window = cost_window_from_query(request.query_params, today=timezone.now().date())
        # Built by the selector, documented by CostReportOut (see agents/usage/serializers.py).
        return Response(workspace_cost_report(principal=self.principal, window=window))
