"""A browser's way onto an agent's proxy origin: a single-use ticket in a URL of that origin,
exchanged there for a cookie of that origin (agents.proxy.cookie). The caller who asked for it
must still hold the agent when the cookie is used (agents.proxy.access)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlencode

from fleet.api.principal import Principal
from fleet.edge.tickets import ticket_issue, ticket_redeem
from workspaces.principals import principal_ref

from ..gateway import endpoint_for
from ..models import Agent
from .hosts import proxy_origin

TICKET_PURPOSE = "gateway-proxy"
TICKET_SECONDS = 60
EXCHANGE_PATH = "/__fleet__/session"  # on the agent's origin; no runtime serves under it


@dataclass(frozen=True)
class ProxySession:
    url: str
    expires_at: datetime


def gateway_session_create(*, principal: Principal, agent: Agent, secure: bool) -> ProxySession:
    """POST /agents/:id/gateway/session: a URL that signs the caller's browser into the agent's
    UI. The agent must serve now (409 agent_not_running) and its endpoint be usable (an adopted
    one's address passes the safety checks, its token the strength rule)."""
    endpoint_for(agent)
    ticket, expires_at = ticket_issue(purpose=TICKET_PURPOSE, seconds=TICKET_SECONDS,
                                      claims={"agent": str(agent.pk), "principal": principal_ref(principal)})
    url = f"{proxy_origin(agent.pk, secure=secure)}{EXCHANGE_PATH}?{urlencode({'ticket': ticket})}"
    return ProxySession(url=url, expires_at=expires_at)


def gateway_ticket_redeem(*, ticket: str, agent_id) -> dict | None:
    """The claims of a ticket for this agent's origin, once; None otherwise."""
    claims = ticket_redeem(purpose=TICKET_PURPOSE, ticket=ticket)
    if claims is None or claims.get("agent") != str(agent_id):
        return None
    return claims
