"""The monitoring sweep against a real OpenClaw: a runtime that stops answering its readiness
route turns `warning` after two checks, with the reason, and `running` again once it answers."""

from __future__ import annotations

import pytest

from agents.models import Agent
from agents.services.monitoring import agents_monitor
from fleet.models import Event

pytestmark = [pytest.mark.django_db, pytest.mark.runtime]
# Reads what the runtimes hold and adds conversations, never changes them: the session's runtimes serve.
SHARES_RUNTIMES = True


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


def _adopted(openclaw_runtime, settings, **fields):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1", "::1"]  # adopted gateways are checked by netsafety
    return openclaw_runtime.agent(is_external=True, deploy_target="external", execution_target_id="external",
                                  container_id="", gateway_url=f"http://127.0.0.1:{openclaw_runtime.port}", **fields)


def test_the_first_sweep_over_an_adopted_runtime_records_its_version(openclaw_runtime, settings):
    agent = _adopted(openclaw_runtime, settings)

    agents_monitor()

    agent.refresh_from_db()
    assert (agent.status, agent.runtime_version) == ("running", "2026.9.6")
    assert agent.last_handshake_at is not None


def test_an_adopted_runtime_that_refuses_the_token_puts_the_agent_in_error(openclaw_runtime, settings):
    wrong = "Wr0ng-" + openclaw_runtime.token[6:]  # as strong as the right one, but not it
    agent = _adopted(openclaw_runtime, settings, gateway_token=wrong)

    agents_monitor()

    agent.refresh_from_db()
    assert agent.status == "error"
    assert agent.last_error.startswith("The runtime refused the agent's gateway token")
    assert wrong not in agent.last_error and openclaw_runtime.token not in agent.last_error
    assert Event.objects.filter(agent_id=agent.pk, kind="agent.error").exists()
