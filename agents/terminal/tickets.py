"""The single-use ticket a browser opens a terminal with: a WebSocket cannot carry the API's
headers, so an authenticated POST (the API's, or the console's for its signed-in operator) mints
a ticket (60 s, fleet.edge.tickets) naming its caller and the agent, in the ws(s) URL that
carries it (`?ticket=`). It is refused beforehand as the socket would refuse it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlencode

from django.conf import settings

from fleet.api.principal import Principal
from fleet.edge.streams import require_stream_room
from fleet.edge.tickets import ticket_issue
from fleet.edge.websocket import PRINCIPAL_CLAIM
from workspaces.principals import principal_ref

from ..models import Agent, TerminalVia
from .access import STREAM_KIND, terminal_backend

TICKET_PURPOSE = "terminal"
TICKET_SECONDS = 60


@dataclass(frozen=True)
class TerminalTicket:
    url: str
    expires_at: datetime


def terminal_path(agent_id) -> str:
    return f"/api/agents/{agent_id}/terminal"


def terminal_ticket_issue(*, principal: Principal, agent: Agent, via: str = TerminalVia.API,
                          secure: bool, host: str) -> TerminalTicket:
    """A ticket for `principal` (whose access to `agent` the caller checked) to open `agent`'s
    terminal once within TICKET_SECONDS, in the URL of the terminal at `host` (wss when
    `secure`). Refused as the socket would be: the agent's state and target
    (access.terminal_backend), 429 when the caller holds TERMINAL_LIMIT_PER_USER terminals. The
    socket checks all of it again."""
    terminal_backend(agent)
    require_stream_room(user=principal.user, kind=STREAM_KIND, per_user=settings.TERMINAL_LIMIT_PER_USER)
    claims = {PRINCIPAL_CLAIM: principal_ref(principal), "agent": str(agent.pk), "via": str(via)}
    ticket, expires_at = ticket_issue(purpose=TICKET_PURPOSE, claims=claims, seconds=TICKET_SECONDS)
    scheme = "wss" if secure else "ws"
    return TerminalTicket(f"{scheme}://{host}{terminal_path(agent.pk)}?{urlencode({'ticket': ticket})}", expires_at)
