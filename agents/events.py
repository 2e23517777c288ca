"""Agent events: `agent.*` events go to every workspace the agent is assigned to (alert rules
are per workspace) and carry the agent's summary (fleet.events.emit(agent=...))."""

from __future__ import annotations

from fleet.events import emit
from fleet.models import Event

from .models import Agent, WorkspaceAgent

# A runtime came up (deployed, started, restarted): what Fleet keeps for it goes in again (its
# model, channels, integrations).
RUNTIME_UP_EVENTS = frozenset({"agent.running", "agent.started", "agent.restarted"})


def agent_event(agent: Agent, kind: str, message: str, *, workspace_ids=None, **data) -> Event:
    """Emit `kind` (e.g. "agent.error") for `agent`; `data` adds details to the event."""
    if workspace_ids is None:
        workspace_ids = WorkspaceAgent.objects.filter(agent_id=agent.pk).values_list("workspace_id", flat=True)
    return emit(kind, message=message, workspace_ids=list(workspace_ids), agent=agent, data=data)
