"""GET/DELETE /agents/:id and its actions: start, stop, restart, redeploy, gateway-url."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from fleet.api.permissions import principal_of
from workspaces.roles import Role

from ..selectors import agent_access, agent_for, agent_for_owner
from ..services.lifecycle import (
    agent_delete,
    agent_gateway_url,
    agent_reconcile,
    agent_redeploy,
    agent_restart,
    agent_start,
    agent_stop,
)
from .bodies import agent_detail_body
from .schemas import AgentDetailOut, AgentOut, GatewayUrlOut, AgentRedeployOut, AgentSuccessOut

OPERATE = Role.EDITOR  # editors of an assigned workspace operate agents; viewers read


class AgentDetailApi(APIView):
    @extend_schema(responses=AgentDetailOut)
    def get(self, request, agent_id):
        access = agent_access(principal_of(request), agent_id)
        agent = agent_reconcile(agent=access.agent)
        return Response(agent_detail_body(agent, role=access.role, is_direct_owner=access.is_direct_owner))

    @extend_schema(responses=AgentSuccessOut)
    def delete(self, request, agent_id):
        agent = agent_for_owner(principal_of(request), agent_id)
        return Response({"success": agent_delete(agent=agent)})


class AgentStartApi(APIView):
    @extend_schema(request=None, responses=AgentOut)
    def post(self, request, agent_id):
        agent = agent_start(agent=agent_for(principal_of(request), agent_id, min_role=OPERATE))
        return Response(agent_detail_body(agent))


class AgentStopApi(APIView):
    @extend_schema(request=None, responses=AgentOut)
    def post(self, request, agent_id):
        agent = agent_stop(agent=agent_for(principal_of(request), agent_id, min_role=OPERATE))
        return Response(agent_detail_body(agent))


class AgentRestartApi(APIView):
    @extend_schema(request=None, responses=AgentSuccessOut)
    def post(self, request, agent_id):
        restarted = agent_restart(agent=agent_for(principal_of(request), agent_id, min_role=OPERATE))
        return Response({"success": restarted})


class AgentRedeployApi(APIView):
    @extend_schema(request=None, responses=AgentRedeployOut)
    def post(self, request, agent_id):
        agent = agent_redeploy(agent=agent_for(principal_of(request), agent_id, min_role=OPERATE))
        return Response({"success": True, "status": agent.status})


class AgentGatewayUrlApi(APIView):
    @extend_schema(responses=GatewayUrlOut)
    def get(self, request, agent_id):
        return Response(agent_gateway_url(agent=agent_for(principal_of(request), agent_id)))
