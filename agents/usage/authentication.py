"""The runtime's own credential for usage reports: `X-Agent-Token`, generated at deploy.

It names no user, only the agent of the URL, so it is a DRF authentication class of its own:
the request's principal becomes an `AgentCredential` for that agent once the token matches the
agent's stored digest (constant time). Sent beside a user credential it is refused (400
conflicting_auth) before either is verified.
"""

from __future__ import annotations

from dataclasses import dataclass

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication

from fleet.api.authentication import API_KEY_HEADERS
from fleet.errors import ConflictingAuth, InvalidCredentials

from ..gateway.tokens import usage_token_matches
from ..models import Agent

AGENT_TOKEN_META = "HTTP_X_AGENT_TOKEN"


@dataclass(frozen=True)
class AgentCredential:
    """A request authenticated by the agent itself."""

    agent: Agent


class AgentTokenAuthentication(BaseAuthentication):
    def authenticate(self, request):
        token = request.META.get(AGENT_TOKEN_META, "").strip()
        if not token:
            return None  # the next class reads the user credentials
        if request.META.get("HTTP_AUTHORIZATION", "").strip() or any(
            request.META.get(header, "").strip() for header in API_KEY_HEADERS
        ):
            raise ConflictingAuth("Send either the agent token or a user credential, not both.")
        agent_id = request.parser_context["kwargs"]["agent_id"]  # the route's <uuid:agent_id>
        agent = Agent.objects.filter(pk=agent_id).first()
        # One answer for an unknown agent and a wrong token: a token reveals nothing.
        if agent is None or not usage_token_matches(agent, token):
            raise InvalidCredentials("The agent token is invalid for this agent.")
        return None, AgentCredential(agent)

    def authenticate_header(self, request):
        return "Agent-Token"


class AgentTokenScheme(OpenApiAuthenticationExtension):
    """OpenAPI: the runtime's X-Agent-Token header."""

    target_class = AgentTokenAuthentication
    name = "agentToken"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "header", "name": "X-Agent-Token"}
