"""WebSocket `/api/agents/:id/terminal`: a shell in the agent's workload (docs/api.md, "Terminal").

In order, each refusal answered by fleet.edge.websocket before the socket is accepted: the caller
(a ticket from POST .../terminal/session, or the API's headers; the cookie from Fleet's own
origin), their access and the agent's state (agents.terminal.access), a stream slot of kind
"terminal" (at most TERMINAL_LIMIT_PER_USER per user, 429), the shell itself (the backend's
WorkloadTerminal.attach_exec). Then the session is recorded, the socket accepted and the frames
relayed (agents.terminal.relay) until it ends; the shell and everything started from it end
with it, and the record says how.
"""

from __future__ import annotations

import asyncio
import logging

from django.conf import settings

from fleet.api.principal import Principal
from fleet.edge.django_thread import in_django_thread
from fleet.edge.streams import astream_open
from fleet.edge.websocket import Socket, socket_caller, websocket_route
from fleet.errors import FleetError, InvalidCredentials
from workspaces.principals import principal_from_ref, principal_ref

from ..backends.base import BackendError, WorkloadNotRunning, WorkloadTerminal
from ..backends.engine import engine_error
from ..gateway.errors import AgentNotRunning
from ..models import SERVING, Agent, TerminalEnd, TerminalVia
from .access import STREAM_KIND, terminal_agent, terminal_backend
from .records import terminal_session_end, terminal_session_seen, terminal_session_start
from .relay import relay
from .tickets import TICKET_PURPOSE

logger = logging.getLogger(__name__)

PATH_PATTERN = r"^/api/agents/(?P<agent_id>[^/]+)/terminal$"
# The shell's size until the client sends its own (xterm.js sends it as soon as it opens).
COLS, ROWS = 80, 24


def _target(principal: Principal, agent_id: str, claims: dict) -> tuple[Agent, WorkloadTerminal]:
    """(agent, backend) of the terminal the caller may open (in the Django thread)."""
    if claims and claims.get("agent") != agent_id:
        raise InvalidCredentials("The ticket was issued for another agent's terminal.")
    agent = terminal_agent(principal, agent_id)
    return agent, terminal_backend(agent)


def _still_allowed(ref: dict, agent_id: str, session_id) -> FleetError | None:
    """The refusal that now applies to the terminal's caller (a revoked session, lost access, a
    stopped agent), or None; vouches for its record (in the Django thread)."""
    terminal_session_seen(session_id=session_id)
    principal = principal_from_ref(ref)
    if principal is None:
        return InvalidCredentials("Your session ended; the terminal is closed.")
    try:
        agent = terminal_agent(principal, agent_id)
        if agent.status not in SERVING:
            return AgentNotRunning(f"The agent is {agent.status}; the terminal is closed.")
    except FleetError as refusal:
        return refusal
    return None


async def _attach(backend: WorkloadTerminal, agent: Agent):
    try:
        return await backend.attach_exec(agent, cols=COLS, rows=ROWS)
    except WorkloadNotRunning as exc:
        raise AgentNotRunning(str(exc)) from None
    except BackendError as exc:
        raise engine_error(exc, reading=True) from None


@websocket_route
async def terminal_socket(socket: Socket, agent_id: str) -> None:
    caller = await socket_caller(socket.scope, ticket_purpose=TICKET_PURPOSE)
    principal = caller.principal
    agent, backend = await in_django_thread(_target, principal, agent_id, caller.claims)
    lease = await astream_open(user=principal.user, kind=STREAM_KIND, per_user=settings.TERMINAL_LIMIT_PER_USER)
    async with lease:
        shell = await _attach(backend, agent)
        ending = TerminalEnd.ERROR
        record = None
        try:
            via = caller.claims.get("via") if caller.claims.get("via") in TerminalVia.values else TerminalVia.API
            record = await in_django_thread(terminal_session_start, agent=agent, user=principal.user, via=via,
                                            client_ip=socket.client_ip)
            await socket.accept()
            ref = principal_ref(principal)
            result = await relay(socket, shell, idle_seconds=settings.TERMINAL_IDLE_SECONDS,
                                 recheck_every=settings.TERMINAL_RECHECK_SECONDS,
                                 recheck=lambda: in_django_thread(_still_allowed, ref, agent_id, record.pk))
            ending = result.reason
        except asyncio.CancelledError:
            ending = TerminalEnd.LOST  # the server is stopping
            raise
        finally:
            await _end(shell, record, ending)


async def _end(shell, record, ending: str) -> None:
    try:
        await shell.close()
    except Exception:
        logger.warning("Closing a terminal's shell failed", exc_info=True)
    if record is not None:
        await in_django_thread(terminal_session_end, session_id=record.pk, reason=ending)
