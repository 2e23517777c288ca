"""GET/PUT /agents/:id/model-gateway (viewers read, editors write; keys agents:read and
agents:write) and GET /agents/:id/model-gateway/traffic (viewers)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from agents.permissions import AgentOperator, AgentReader
from fleet.api.views import ApiView
from fleet.errors import ValidationFailed

from .serializers import LimitsIn, LimitsOut, TrafficOut
from .services import limits_record, limits_set
from .traffic import MAX_HOURS, agent_traffic


class ModelGatewayLimitsApi(ApiView):
    access = {"GET": (AgentReader,), "PUT": (AgentOperator,)}
    request_examples = {"PUT": {"Sixty calls a minute, two models": {
        "requestsPerMinute": 60, "tokensPerMinute": 200000, "allowedModels": ["gpt-4o-mini", "gpt-4.1-nano"]}}}

    @extend_schema(responses=LimitsOut)
    def get(self, request, agent_id):
        """The agent's limits at the model gateway."""
        return Response(LimitsOut(limits_record(request.agent_access.agent)).data)

    @extend_schema(request=LimitsIn, responses=LimitsOut)
    def put(self, request, agent_id):
        """Set the agent's calls and tokens per minute and its allowed models at the model gateway."""
        agent = request.agent_access.agent
        limits_set(agent=agent, body=request.data)
        return Response(LimitsOut(limits_record(agent)).data)


class ModelGatewayTrafficApi(ApiView):
    access = {"GET": (AgentReader,)}

    @extend_schema(responses=TrafficOut, parameters=[OpenApiParameter(
        "hours", int, description=f"the window, 1 to {MAX_HOURS} hours back from now (default 24)")])
    def get(self, request, agent_id):
        """The agent's calls through the model gateway by hour: forwarded, tokens, spend and refusals."""
        raw = request.query_params.get("hours", "24")
        if not raw.isdigit() or not 1 <= int(raw) <= MAX_HOURS:
            raise ValidationFailed({"hours": f"A whole number from 1 to {MAX_HOURS}."})
        return Response(TrafficOut(agent_traffic(agent_id=request.agent_access.agent.pk, hours=int(raw))).data)
