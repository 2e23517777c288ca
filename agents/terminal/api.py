"""POST /api/agents/:id/terminal/session: the URL a browser opens the agent's terminal with
(the WebSocket itself is agents.terminal.socket, routed before Django)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from fleet.api.permissions import SessionOnly
from fleet.api.views import ApiView

from ..permissions import AgentRole
from .access import TERMINAL_ROLE
from .serializers import TerminalTicketOut
from .tickets import TICKET_SECONDS, terminal_ticket_issue


class AgentTerminalSessionApi(ApiView):
    access = {"POST": (SessionOnly, AgentRole(TERMINAL_ROLE))}
    documented_errors = (409, 429, 502)  # not running, no workload, unsupported; too many terminals; no engine

    @extend_schema(
        summary="Open the agent's terminal from a browser: a WebSocket URL with a single-use ticket",
        description=(
            "Signed-in sessions only: the agent's direct owner, an admin or owner of a workspace it is assigned "
            f"to, or a platform admin. `url` (`ws://` or `wss://.../api/agents/:id/terminal?ticket=...`) opens the "
            f"terminal once within {TICKET_SECONDS} s; the WebSocket checks access again. Refused beforehand as "
            "the WebSocket would be: 409 `agent_not_running`, `no_container` or `unsupported` (Proxmox), 429 "
            "`too_many_streams` when the caller holds TERMINAL_LIMIT_PER_USER terminals already. The frames and "
            "close codes are in docs/api.md, \"Terminal\"."
        ),
        request=None,
        responses=TerminalTicketOut,
    )
    def post(self, request, agent_id):
        ticket = terminal_ticket_issue(principal=self.principal, agent=request.agent_access.agent,
                                       secure=request.is_secure(), host=request.get_host())
        return Response(TerminalTicketOut(ticket).data)
