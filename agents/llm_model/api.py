"""GET/PUT/DELETE /agents/:id/model: viewers read, editors choose (keys: agents:read, agents:write)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework.response import Response

from fleet.api.views import ApiView

from ..permissions import AgentOperator, AgentReader
from .serializers import ModelIn, ModelOut
from .services import agent_model_clear, model_record, model_set_from_body


class AgentModelApi(ApiView):
    documented_errors = (403,)
    access = {"GET": (AgentReader,), "PUT": (AgentOperator,), "DELETE": (AgentOperator,)}

    @extend_schema(responses=ModelOut)
    def get(self, request, agent_id):
        """The agent's model: its own, the platform default, or none (the key never shown)."""
        return Response(ModelOut(model_record(request.agent_access.agent)).data)

    @extend_schema(request=ModelIn, responses=ModelOut, examples=[OpenApiExample(
        "A saved OpenAI key", request_only=True,
        value={"keyId": "<id of a saved key>", "name": "gpt-4o-mini", "fallbacks": ["gpt-4.1-nano"]})])
    def put(self, request, agent_id):
        """Choose the agent's model; a running agent gets it at once (OpenClaw then restarts itself to load it)."""
        agent = request.agent_access.agent
        model_set_from_body(principal=self.principal, agent=agent, value=request.data)
        return Response(ModelOut(model_record(agent)).data)

    @extend_schema(request=None, responses=ModelOut)
    def delete(self, request, agent_id):
        """Drop the agent's own model: it takes the platform default, or none."""
        agent = request.agent_access.agent
        agent_model_clear(agent=agent)
        return Response(ModelOut(model_record(agent)).data)
