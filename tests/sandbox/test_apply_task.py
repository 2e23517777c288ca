"""The background apply of a policy: which failures it waits out and which end it.

OpenClaw refuses connections with a retryable "gateway starting" for a while after it (re)starts;
the start that queued the apply lands in that window, so the task must wait it out like an
unreachable runtime (a CI run lost a policy posted to a stopped agent this way).
"""

from __future__ import annotations

import pytest

from agents.gateway import AgentNotRunning, GatewayDropped, GatewayError
from fleet.errors import FleetError
from sandbox import tasks

pytestmark = pytest.mark.django_db


@pytest.fixture
def failing_apply(monkeypatch, settings):
    """policy_apply raising `error` every time; answers how many times the task called it."""
    settings.SANDBOX_APPLY_MAX_RETRIES = 3
    calls = []

    def install(error: Exception):
        def policy_apply(*, agent_id):
            calls.append(agent_id)
            raise error
        monkeypatch.setattr(tasks, "policy_apply", policy_apply)
        return calls
    return install


@pytest.mark.parametrize("error", [
    GatewayError("The runtime refused connect: gateway starting; retry shortly", retryable=True),
    GatewayDropped("The agent's gateway could not be reached (ConnectionRefusedError)."),
    AgentNotRunning(),
], ids=["starting", "unreachable", "not-running-yet"])
def test_a_runtime_not_ready_yet_is_retried_until_the_retries_run_out(failing_apply, error, agent):
    calls = failing_apply(error)
    tasks.sandbox_policy_apply.apply(args=(str(agent.pk),))  # eager: each retry runs at once
    assert len(calls) == 1 + 3


def test_a_refusal_for_good_ends_the_task_at_once(failing_apply, agent):
    calls = failing_apply(GatewayError("invalid config: tools.profile", retryable=False))
    result = tasks.sandbox_policy_apply.apply(args=(str(agent.pk),))
    assert len(calls) == 1
    assert isinstance(result.result, FleetError)
