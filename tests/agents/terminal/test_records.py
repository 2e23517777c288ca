"""The terminal's records (agents.terminal.records): ended once with how, and those a dead web
process left open ended as `lost` at their last sign of life when the next terminal opens."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from agents.models import TerminalSession
from agents.terminal.records import terminal_session_end, terminal_session_seen, terminal_session_start

pytestmark = pytest.mark.django_db


def test_a_record_names_who_and_which_agent_and_ends_once(tenancy):
    agent = tenancy.agent(status="running")
    record = terminal_session_start(agent=agent, user=tenancy.admin, via="console", client_ip="10.1.2.3")

    terminal_session_end(session_id=record.pk, reason="idle")
    terminal_session_end(session_id=record.pk, reason="closed")  # a second end changes nothing

    record.refresh_from_db()
    assert (record.agent_id, record.agent_name, record.user_id, record.user_email, record.via, record.client_ip) == (
        agent.pk, agent.name, tenancy.admin.pk, tenancy.admin.email, "console", "10.1.2.3")
    assert record.end_reason == "idle" and record.ended_at >= record.started_at


def test_records_outlive_their_agent_and_user(tenancy):
    agent = tenancy.agent(status="running")
    record = terminal_session_start(agent=agent, user=tenancy.editor, via="api", client_ip="")
    TerminalSession.objects.filter(pk=record.pk).update(ended_at=timezone.now(), end_reason="closed")

    agent.delete()
    tenancy.editor.delete()

    record.refresh_from_db()
    assert (record.agent_id, record.user_id) == (None, None)
    assert (record.agent_name, record.user_email) == (agent.name, tenancy.editor.email)


def test_a_record_its_process_stopped_vouching_for_is_ended_as_lost_by_the_next_terminal(tenancy, settings):
    settings.TERMINAL_RECHECK_SECONDS = 60
    agent = tenancy.agent(status="running")
    alive = terminal_session_start(agent=agent, user=tenancy.admin, via="api", client_ip="")
    dead = terminal_session_start(agent=agent, user=tenancy.admin, via="api", client_ip="")
    last_sign = timezone.now() - timedelta(minutes=10)
    TerminalSession.objects.filter(pk__in=[alive.pk, dead.pk]).update(seen_at=last_sign)
    terminal_session_seen(session_id=alive.pk)  # its process is still serving it

    terminal_session_start(agent=agent, user=tenancy.owner, via="api", client_ip="")

    dead.refresh_from_db()
    alive.refresh_from_db()
    assert (dead.end_reason, dead.ended_at) == ("lost", last_sign)
    assert alive.ended_at is None
