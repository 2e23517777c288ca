"""An adopted runtime that cannot be reached: its first handshake says why in `last_error`, leaves
the agent `running` and asks to be tried again (a later one on the real Hermes clears the reason:
tests/agents/runtimes/test_adopted_handshake_real.py)."""

from __future__ import annotations

import secrets

import pytest

from agents.models import Agent
from agents.services.handshake import NO_HANDSHAKE, agent_first_handshake
from agents.tasks import FIRST_HANDSHAKE_TASK, first_handshake, retry_countdown
from fleet.celery import app
from tests.factories.agents import AgentFactory
from tests.infra.runtimes import free_loopback_port

pytestmark = pytest.mark.django_db



@pytest.fixture
def adopted(settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1", "::1"]
    port = free_loopback_port()  # nothing listens there
    return AgentFactory(runtime_family="hermes", status="running", is_external=True, deploy_target="external",
                        execution_target_id="external", container_id="", gateway_host_port=port,
                        gateway_url=f"http://127.0.0.1:{port}", gateway_token=secrets.token_urlsafe(32))


def test_an_unreachable_runtime_leaves_the_reason_and_asks_to_be_tried_again(adopted):
    assert agent_first_handshake(agent_id=adopted.pk) is False

    agent = Agent.objects.get(pk=adopted.pk)
    assert agent.status == "running"
    assert agent.last_error.startswith(NO_HANDSHAKE)
    assert "unreachable" in agent.last_error.lower() or "connect" in agent.last_error.lower()
    assert agent.gateway_token not in agent.last_error
    assert agent.last_handshake_at is None


def test_nothing_is_left_to_do_for_an_agent_gone(adopted):
    Agent.objects.filter(pk=adopted.pk).delete()
    assert agent_first_handshake(agent_id=adopted.pk) is True


def test_a_deployed_agent_s_failed_handshake_leaves_last_error_alone(settings):
    agent = AgentFactory(runtime_family="hermes", status="running", gateway_host_port=free_loopback_port(),
                         gateway_token=secrets.token_urlsafe(32))

    assert agent_first_handshake(agent_id=agent.pk) is False
    assert Agent.objects.get(pk=agent.pk).last_error == ""


def test_the_task_is_registered_under_its_name_and_backs_off():
    assert first_handshake.name == FIRST_HANDSHAKE_TASK and FIRST_HANDSHAKE_TASK in app.tasks
    assert [retry_countdown(n) for n in range(7)] == [1, 2, 4, 8, 16, 30, 30]
