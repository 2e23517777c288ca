"""The record of each terminal (agents.models.TerminalSession): opened, vouched for while it
lives, ended with how. Never what was typed or shown."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from ..models import Agent, TerminalEnd, TerminalSession

LOST_AFTER_CHECKS = 3  # a record its process has not vouched for in this many re-checks is lost


def terminal_session_start(*, agent: Agent, user, via: str, client_ip: str) -> TerminalSession:
    """The record of a terminal that just opened. Records left open by a web process that died
    are ended first, as `lost` when they were last vouched for."""
    terminal_sessions_lost_end()
    return TerminalSession.objects.create(agent=agent, agent_name=agent.name, user=user, user_email=user.email,
                                          via=via, client_ip=client_ip or None)


def terminal_session_seen(*, session_id) -> None:
    TerminalSession.objects.filter(pk=session_id, ended_at__isnull=True).update(seen_at=timezone.now())


def terminal_session_end(*, session_id, reason: str) -> None:
    """End the record once; a second end (or one after `lost`) changes nothing."""
    TerminalSession.objects.filter(pk=session_id, ended_at__isnull=True).update(ended_at=timezone.now(),
                                                                                 end_reason=reason)


def terminal_sessions_lost_end() -> int:
    """End the open records whose process stopped vouching for them, at their last sign of life."""
    stale = timezone.now() - timedelta(seconds=settings.TERMINAL_RECHECK_SECONDS * LOST_AFTER_CHECKS)
    return TerminalSession.objects.filter(ended_at__isnull=True, seen_at__lt=stale).update(
        ended_at=F("seen_at"), end_reason=TerminalEnd.LOST)
