"""Who may open a terminal on an agent, and what the agent must be for one to open.

A shell in the workload can read every secret the runtime holds, so the bar is higher than
operating the agent: a signed-in session (never an API key) of the agent's direct owner, an
admin or owner of a workspace the agent is assigned to, or a platform admin; viewers and
editors are refused. The agent must run a workload of ours whose target can open a shell.
"""

from __future__ import annotations

from fleet.api.principal import Principal
from fleet.errors import Conflict, NoContainerToInspect, SessionRequired
from workspaces.roles import Role

from ..backends.base import BackendError, WorkloadTerminal
from ..backends.engine import backend_of, engine_error
from ..gateway.errors import AgentNotRunning
from ..models import SERVING, Agent
from ..selectors import agent_access

TERMINAL_ROLE = Role.ADMIN
STREAM_KIND = "terminal"  # the stream leases terminals hold (fleet.edge.streams)


class TerminalUnsupported(Conflict):
    code = "unsupported"
    default_message = "The agent's deploy target cannot open a shell in its workload."


def terminal_agent(principal: Principal, agent_id) -> Agent:
    """The agent `principal` may open a terminal on: 403 session_required for a key, 404 when
    it may not see the agent, 403 below TERMINAL_ROLE."""
    if principal.is_api_key:
        raise SessionRequired("A terminal needs a signed-in session; API keys are refused.")
    return agent_access(principal, agent_id, min_role=TERMINAL_ROLE).agent


def terminal_backend(agent: Agent) -> WorkloadTerminal:
    """The backend that opens the agent's shell: 409 no_container without a workload of ours,
    409 agent_not_running unless it serves, 409 unsupported on a target without a shell,
    502 daemon_unreachable when no backend serves its target any more."""
    if agent.is_external or not agent.container_id:
        raise NoContainerToInspect("The agent has no workload to open a shell in.")
    if agent.status not in SERVING:
        raise AgentNotRunning(f"The agent is {agent.status}; a terminal needs it running.")
    try:
        backend = backend_of(agent)
    except BackendError as exc:
        raise engine_error(exc, reading=True) from None
    if not isinstance(backend, WorkloadTerminal):
        raise TerminalUnsupported()
    return backend
