"""The monitoring sweep against a real OpenClaw: a runtime that stops answering its readiness
route turns `warning` after two checks, with the reason, and `running` again once it answers."""

from __future__ import annotations

import pytest

from agents.models import Agent
from agents.services.monitoring import agents_monitor
from fleet.models import Event

pytestmark = [pytest.mark.django_db, pytest.mark.runtime]


def test_an_unanswering_runtime_turns_warning_and_comes_back(openclaw_runtime, docker_settings):
    agent = openclaw_runtime.agent(container_id=openclaw_runtime.container.id)
    agents_monitor()
    agent.refresh_from_db()
    assert (agent.status, agent.runtime_version) == ("running", "2026.9.6")  # shaken hands at the first sweep

    openclaw_runtime.container.pause()  # the process is frozen: its gateway answers nothing
    try:
        agents_monitor()
        agents_monitor()
        warned = Agent.objects.get(pk=agent.pk)
    finally:
        openclaw_runtime.container.unpause()
    assert warned.status == "warning"
    assert warned.last_error.startswith("The runtime is not ready")

    agents_monitor()
    recovered = Agent.objects.get(pk=agent.pk)
    assert (recovered.status, recovered.last_error) == ("running", "")
    kinds = list(Event.objects.filter(agent_id=agent.pk).order_by("occurred_at").values_list("kind", flat=True))
    assert kinds[-2:] == ["agent.warning", "agent.running"]
