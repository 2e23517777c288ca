"""Reads of the sandbox app: pending approvals and the sandbox's status."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from agents.gateway import gateway_for
from agents.models import SERVING, Agent
from fleet.errors import FleetError

from .inference import inference_key
from .models import ApprovalStatus, SandboxApproval, SandboxPolicy
from .services import approvals_expire, policy_current


def approvals_pending(agent: Agent) -> list[SandboxApproval]:
    """Pending requests, oldest first; none for an agent that is not running (its runtime holds
    no request it could still answer)."""
    if agent.status not in SERVING:
        return []
    approvals_expire(agent=agent)
    return list(SandboxApproval.objects.filter(agent=agent, status=ApprovalStatus.PENDING).order_by("created_at"))


@dataclass(frozen=True)
class PolicyState:
    version: int
    policy: dict
    applied_at: datetime | None
    network_enforced: bool = False  # no backend confines a workload's network yet

    @property
    def applied(self) -> bool:
        return self.applied_at is not None


def policy_state(policy: SandboxPolicy) -> PolicyState:
    return PolicyState(version=policy.version, policy=policy.document, applied_at=policy.applied_at)


@dataclass(frozen=True)
class SandboxStatus:
    agent_status: str
    model: str
    inference_configured: bool
    policy_version: int
    policy_applied: bool
    pending_approvals: int
    runtime: dict | None
    sandbox: str = "nemoclaw"


def sandbox_status(agent: Agent) -> SandboxStatus:
    """The sandbox as the lifecycle and, while it runs, the runtime itself report it."""
    policy = policy_current(agent)
    return SandboxStatus(
        agent_status=agent.status,
        model=policy.document.get("model", ""),
        inference_configured=bool(inference_key(agent)),
        policy_version=policy.version,
        policy_applied=policy.applied_at is not None,
        pending_approvals=len(approvals_pending(agent)),
        runtime=_runtime(agent) if agent.status in SERVING else None,
    )


def _runtime(agent: Agent) -> dict | None:
    """The runtime's version and effective exec policy; None when it cannot be asked now."""
    try:
        gateway = gateway_for(agent)
        version = gateway.handshake().version
        effective = gateway.exec_policy_get().get("effective_defaults") or {}
    except FleetError:
        return None
    return {"version": version, "exec": {"security": effective.get("security"), "ask": effective.get("ask"),
                                         "askFallback": effective.get("askFallback")}}
