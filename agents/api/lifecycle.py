"""GET/DELETE /agents/:id and its actions: start, stop, restart, redeploy, gateway-url."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from fleet.api.serializers import SuccessOut
from fleet.api.views import ApiView

from ..permissions import AgentOperator, AgentOwner, AgentReader
from ..services.lifecycle import (
    agent_delete,
    agent_gateway_url,
    agent_reconcile,
    agent_redeploy,
    agent_restart,
    agent_start,
    agent_stop,
)
from .serializers import AgentDetailOut, AgentOut, AgentRedeployOut, GatewayUrlOut


class AgentDetailApi(ApiView):
    documented_errors = {"DELETE": (502,)}
    access = {"GET": (AgentReader,), "DELETE": (AgentOwner,)}

    @extend_schema(responses=AgentDetailOut)
    def get(self, request, agent_id):
        """One agent, its status reconciled with the live workload."""
        access = request.agent_access
        agent = agent_reconcile(agent=access.agent)
        return Response(AgentDetailOut(agent, context={"access": access}).data)

    @extend_schema(responses={200: SuccessOut})
    def delete(self, request, agent_id):
        """Delete the agent and destroy its workload (direct owner only; irreversible)."""
        agent_delete(agent=request.agent_access.agent)
        return Response(SuccessOut({"success": True}).data)


class AgentStartApi(ApiView):
    documented_errors = (502,)
    access = {"POST": (AgentOperator,)}

    @extend_schema(request=None, responses=AgentOut)
    def post(self, request, agent_id):
        """Start the agent's existing container."""
        return Response(AgentOut(agent_start(agent=request.agent_access.agent)).data)


class AgentStopApi(ApiView):
    documented_errors = (502,)
    access = {"POST": (AgentOperator,)}

    @extend_schema(request=None, responses=AgentOut)
    def post(self, request, agent_id):
        """Stop the agent's container gracefully."""
        return Response(AgentOut(agent_stop(agent=request.agent_access.agent)).data)


class AgentRestartApi(ApiView):
    documented_errors = (502,)
    access = {"POST": (AgentOperator,)}

    @extend_schema(request=None, responses=SuccessOut)
    def post(self, request, agent_id):
        """Restart the agent's container in place."""
        agent_restart(agent=request.agent_access.agent)
        return Response(SuccessOut({"success": True}).data)


class AgentRedeployApi(ApiView):
    documented_errors = (502, 503)
    access = {"POST": (AgentOperator,)}

    @extend_schema(request=None, responses=AgentRedeployOut)
    def post(self, request, agent_id):
        """Deploy the agent again from warning, error or stopped (status queued)."""
        agent = agent_redeploy(agent=request.agent_access.agent)
        return Response(AgentRedeployOut({"success": True, "status": agent.status}).data)


class AgentGatewayUrlApi(ApiView):
    documented_errors = (409, 502)
    access = {"GET": (AgentReader,)}

    @extend_schema(responses=GatewayUrlOut)
    def get(self, request, agent_id):
        """The address of the agent's own UI, through the gateway proxy."""
        return Response(GatewayUrlOut(agent_gateway_url(agent=request.agent_access.agent,
                                                        secure=request.is_secure())).data)
