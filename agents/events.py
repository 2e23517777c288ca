"""Agent events: one helper so every `agent.*` event carries the same shape.

The event belongs to every workspace the agent is assigned to (alert rules are per
workspace) and names the agent in `data`, so a delivery still says which agent it was
after the agent is deleted.
"""

from __future__ import annotations

from fleet.events import emit
from fleet.models import Event

from .models import Agent, WorkspaceAgent


def agent_event(agent: Agent, kind: str, message: str, *, workspace_ids=None, **data) -> Event:
    """Emit `kind` (e.g. "agent.error") for `agent`; `data` adds details to the event."""
    if workspace_ids is None:
        workspace_ids = WorkspaceAgent.objects.filter(agent_id=agent.pk).values_list("workspace_id", flat=True)
    payload = {"agent": {"id": str(agent.pk), "name": agent.name, "status": agent.status}, **data}
    return emit(kind, message=message, workspace_ids=list(workspace_ids), agent_id=agent.pk, data=payload)
