"""The gateway listener SIGKILLed and restarted (docs/reliability.md): the listener (the
Procfile's `gateway`) is killed while it holds a sandboxed agent's connection to a real OpenClaw
(its test image, the fake model asking for a command) and started again: once it holds the agent
again, an exec approval the runtime raises right after is recorded once and its resolution
reaches the row. (A request raised while no listener is connected is denied by OpenClaw itself at
once, "no-route": there is nothing to record, and nothing pending to lose.)
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from agents.gateway import gateway_for
from sandbox.models import ApprovalStatus, SandboxApproval
from tests.faults.stack import private_stack, wait_for
from tests.infra.fake_model import ANSWER

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

LISTENER_RECOVERY_BOUND = 15  # seconds from the restart to the agent held again


def _held(log: Path, agent) -> bool:
    return f"Holding agent {agent.pk}'s gateway" in log.read_text()


@pytest.mark.runtime
def test_the_gateway_listener_killed_and_restarted_still_records_approvals(tmp_path, openclaw_runtime, fake_model,
                                                                          docker_engine_url):
    agent = openclaw_runtime.agent(name="listener-fault", sandbox_profile="nemoclaw")
    gateway = gateway_for(agent)
    gateway.config_patch({"tools": {"exec": {"mode": "ask"}}})
    env = {"GATEWAY_LISTENER_REFRESH_SECONDS": "0.5"}
    runner, outcome = None, {}
    try:
        with private_stack(tmp_path, docker_engine_url, env=env) as stack:
            first = stack.worker("gateway", ready="started")
            wait_for(lambda: _held(first.log, agent), timeout=30, what="the agent held", stack=stack)
            first.kill()
            restarted = time.monotonic()
            second = stack.worker("gateway", ready="started")
            wait_for(lambda: _held(second.log, agent), timeout=LISTENER_RECOVERY_BOUND,
                     what="the agent held again", stack=stack)
            recovered = time.monotonic() - restarted

            fake_model.offer_tool_call("node --version")
            runner = threading.Thread(target=lambda: outcome.update(
                reply=gateway.send_message("Run the check.", conversation="listener-fault", timeout=90)))
            runner.start()
            approval = wait_for(lambda: SandboxApproval.objects.filter(agent=agent).first(), timeout=60,
                                what="the approval recorded", stack=stack)
            assert (approval.command, approval.status) == ("node --version", ApprovalStatus.PENDING)
            gateway.approval_resolve(approval.request_id, "allow-once")
            wait_for(lambda: SandboxApproval.objects.get(pk=approval.pk).status == ApprovalStatus.APPROVED,
                     timeout=30, what="the runtime's resolution recorded", stack=stack)
            runner.join(timeout=60)

        assert SandboxApproval.objects.filter(agent=agent).count() == 1  # recorded once
        assert outcome["reply"].text == ANSWER  # the command ran and the model answered after it
        assert recovered < LISTENER_RECOVERY_BOUND
    finally:
        gateway.config_patch({"tools": {"exec": {"mode": "full"}}})
        if runner is not None:
            runner.join(timeout=30)
