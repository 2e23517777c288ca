"""A runtime that came up gets the integrations' state again."""

from __future__ import annotations

from agents.events import RUNTIME_UP_EVENTS
from fleet.models import Event
from fleet.task_queue import task_named

from .models import Integration
from .services.connections import APPLY_TASK


def on_agent_event(event: Event) -> None:
    """After commit: queue the apply for an agent that has integrations (other agents' starts
    cost nothing)."""
    if event.kind not in RUNTIME_UP_EVENTS or event.agent_id is None:
        return
    if Integration.objects.filter(agent_id=event.agent_id).exists():
        task_named(APPLY_TASK).delay_on_commit(str(event.agent_id), True)
