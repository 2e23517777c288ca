"""POST /agents/:id/gateway/session (editors; keys agents:write): a URL that signs the caller's
browser into the agent's own UI, on its own origin."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from fleet.api.serializers import TimestampField
from fleet.api.views import ApiView

from ..permissions import AgentOperator
from .sessions import TICKET_SECONDS, gateway_session_create


class GatewaySessionOut(serializers.Serializer):
    url = serializers.CharField()
    expiresAt = TimestampField(source="expires_at")


class AgentGatewaySessionApi(ApiView):
    access = {"POST": (AgentOperator,)}
    documented_errors = (409, 502)  # not running; its gateway unusable (weak token, unsafe address)

    @extend_schema(
        summary="A single-use link into the agent's own UI",
        description=(
            f"`url` opens the agent's UI on its own origin (`<agent-id>.<GATEWAY_PROXY_DOMAIN>`): valid for "
            f"{TICKET_SECONDS} s and once, it leaves that origin a cookie of its own (GATEWAY_PROXY_COOKIE_HOURS), "
            "which stops working when the caller signs out everywhere, its key is revoked or it may no longer "
            "operate the agent. The runtime's token never reaches the browser: Fleet adds it on the way."
        ),
        request=None,
        responses=GatewaySessionOut,
    )
    def post(self, request, agent_id):
        session = gateway_session_create(principal=self.principal, agent=request.agent_access.agent,
                                         secure=request.is_secure())
        return Response(GatewaySessionOut(session).data)
