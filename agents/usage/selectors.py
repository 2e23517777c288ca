"""Who may report usage for an agent: the agent itself (its ingest token) or an operator.

`X-Agent-Token` is the runtime's credential (DESIGN.md section 4): it names no user, so it
is checked here against the agent's stored digest, in constant time. Otherwise the caller
is an ordinary principal and needs `agents:write` (editor) on the agent.
"""

from __future__ import annotations

from fleet.api.authentication import API_KEY_HEADERS
from fleet.errors import ConflictingAuth, InvalidCredentials
from fleet.api.permissions import principal_of
from workspaces.roles import Role

from ..models import Agent
from ..selectors import agent_for
from ..tokens import usage_token_matches

AGENT_TOKEN_META = "HTTP_X_AGENT_TOKEN"


def agent_token_of(request) -> str:
    """The X-Agent-Token a request carries ("" when none); refuses it beside another credential."""
    token = request.META.get(AGENT_TOKEN_META, "").strip()
    if token and (request.META.get("HTTP_AUTHORIZATION", "").strip()
                  or any(request.META.get(h, "").strip() for h in API_KEY_HEADERS)):
        raise ConflictingAuth("Send either the agent token or a user credential, not both.")
    return token


def usage_agent_for(request, agent_id) -> Agent:
    """The agent usage is reported for, or 401 (bad agent token) / the agent_for errors."""
    token = agent_token_of(request)
    if not token:
        return agent_for(principal_of(request), agent_id, min_role=Role.EDITOR)
    agent = Agent.objects.filter(pk=agent_id).first()  # the route's <uuid:agent_id>
    # One answer for an unknown agent and a wrong token: a token reveals nothing.
    if agent is None or not usage_token_matches(agent, token):
        raise InvalidCredentials("The agent token is invalid for this agent.")
    return agent
