"""Desired channel state reaches a runtime again after a (re)deploy or a start."""

from __future__ import annotations

from agents.events import RUNTIME_UP_EVENTS
from fleet.models import Event

from .models import ChannelMessage, MessageState, RuntimeChannel
from .tasks import reapply


def on_agent_event(event: Event) -> None:
    """After commit: queue the reapply task for an agent that has something to reapply."""
    if event.kind not in RUNTIME_UP_EVENTS or event.agent_id is None:
        return
    has_work = (RuntimeChannel.objects.filter(agent_id=event.agent_id).exists()
                or ChannelMessage.objects.filter(channel__agent_id=event.agent_id, state=MessageState.PENDING,
                                                 direction="inbound").exists())
    if has_work:
        reapply.delay_on_commit(str(event.agent_id))


__all__ = ["on_agent_event"]
