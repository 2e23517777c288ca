"""GET/DELETE /agents/:id and its actions: start, stop, restart, redeploy, gateway-url."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from fleet.api.views import ApiView

from ..services.lifecycle import (
    agent_delete,
    agent_gateway_url,
    agent_reconcile,
    agent_redeploy,
    agent_restart,
    agent_start,
    agent_stop,
)
from .access import AgentOperator, AgentOwner, AgentReader
from .bodies import agent_detail_body
from .schemas import AgentDetailOut, AgentOut, GatewayUrlOut, AgentRedeployOut, AgentSuccessOut


class AgentDetailApi(ApiView):
    access = {"GET": (AgentReader,), "DELETE": (AgentOwner,)}

    @extend_schema(responses=AgentDetailOut)
    def get(self, request, agent_id):
        access = request.agent_access
        agent = agent_reconcile(agent=access.agent)
        return Response(agent_detail_body(agent, role=access.role, is_direct_owner=access.is_direct_owner))

    @extend_schema(responses=AgentSuccessOut)
    def delete(self, request, agent_id):
        return Response({"success": agent_delete(agent=request.agent_access.agent)})


class AgentStartApi(ApiView):
    access = {"POST": (AgentOperator,)}

    @extend_schema(request=None, responses=AgentOut)
    def post(self, request, agent_id):
        return Response(agent_detail_body(agent_start(agent=request.agent_access.agent)))


class AgentStopApi(ApiView):
    access = {"POST": (AgentOperator,)}

    @extend_schema(request=None, responses=AgentOut)
    def post(self, request, agent_id):
        return Response(agent_detail_body(agent_stop(agent=request.agent_access.agent)))


class AgentRestartApi(ApiView):
    access = {"POST": (AgentOperator,)}

    @extend_schema(request=None, responses=AgentSuccessOut)
    def post(self, request, agent_id):
        return Response({"success": agent_restart(agent=request.agent_access.agent)})


class AgentRedeployApi(ApiView):
    access = {"POST": (AgentOperator,)}

    @extend_schema(request=None, responses=AgentRedeployOut)
    def post(self, request, agent_id):
        agent = agent_redeploy(agent=request.agent_access.agent)
        return Response({"success": True, "status": agent.status})


class AgentGatewayUrlApi(ApiView):
    access = {"GET": (AgentReader,)}

    @extend_schema(responses=GatewayUrlOut)
    def get(self, request, agent_id):
        return Response(agent_gateway_url(agent=request.agent_access.agent))
