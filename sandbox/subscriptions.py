"""What the sandbox app listens to: agent lifecycle events (fleet.events) and the runtime's
approval events (the gateway listener's hook)."""

from __future__ import annotations

from agents.gateway import register_listener_hook
from agents.gateway.protocol import ADMIN, APPROVAL_CAPS, APPROVALS
from agents.models import Agent, SandboxProfile
from fleet import events

from .services import approval_event_record, approvals_forget_pending, policy_apply_enqueue

# A runtime that comes up (again) gets the stored policy: after provisioning or a redeploy
# (agent.running), a start and a restart.
COMING_UP = {"agent.running", "agent.started", "agent.restarted"}
RESTARTED = {"agent.started", "agent.restarted"}  # the runtime forgot its pending requests


def on_agent_event(event) -> None:
    if event.kind not in COMING_UP or event.agent_id is None:
        return
    agent = Agent.objects.filter(pk=event.agent_id, sandbox_profile=SandboxProfile.NEMOCLAW).first()
    if agent is None:
        return
    if event.kind in RESTARTED:
        approvals_forget_pending(agent_id=agent.pk)
    policy_apply_enqueue(agent)


def _sandboxed(agents):
    return agents.filter(sandbox_profile=SandboxProfile.NEMOCLAW)


def _handler(agent_id: str, event: str, payload: dict) -> None:
    approval_event_record(agent_id, event, payload)


def register() -> None:
    events.subscribe(on_agent_event)
    # Exec approvals reach only a connected client with operator.admin and the approval caps: the
    # listener's connection is that client for every sandboxed agent (RUNTIMES.md).
    register_listener_hook(
        "sandbox.approvals",
        events={"exec.approval.requested", "exec.approval.resolved"},
        wants=_sandboxed,
        scopes={ADMIN, APPROVALS}, caps=set(APPROVAL_CAPS),
        handler=_handler,
    )
