"""Approval requests: recorded from the runtime's events (through the gateway listener), decided
by an operator through the API, expired when the runtime's deadline passes or it forgets them."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from agents.events import agent_event
from agents.gateway import GatewayError, gateway_for
from agents.models import Agent, SandboxProfile
from fleet.errors import NotFound

from ..errors import ApprovalDecided, ApprovalExpired
from ..models import ApprovalStatus, SandboxApproval

logger = logging.getLogger(__name__)

REQUESTED, RESOLVED = "exec.approval.requested", "exec.approval.resolved"
RUNTIME_DECISION = {"approve": "allow-once", "deny": "deny"}
STATUS_OF_RUNTIME_DECISION = {"allow-once": ApprovalStatus.APPROVED, "allow-always": ApprovalStatus.APPROVED,
                              "deny": ApprovalStatus.DENIED}
# How OpenClaw 2026.9.6 refuses an id it no longer holds.
_GONE_MARKERS = ("unknown or expired", "expired or not found")


def _moment(milliseconds) -> datetime | None:
    if isinstance(milliseconds, (int, float)) and not isinstance(milliseconds, bool) and milliseconds > 0:
        return datetime.fromtimestamp(milliseconds / 1000, tz=UTC)
    return None


def approval_event_record(agent_id: str, event: str, payload: dict) -> None:
    """The gateway listener's hook handler (sync, in a worker thread)."""
    if not isinstance(payload, dict):
        return
    if event == REQUESTED:
        approval_requested_record(agent_id=agent_id, payload=payload)
    elif event == RESOLVED:
        approval_resolved_record(agent_id=agent_id, payload=payload)


def approval_requested_record(*, agent_id, payload: dict) -> SandboxApproval | None:
    """Store a pending request and emit `sandbox.approval_requested` (alert rules deliver it).
    A request seen twice (a reconnect replays nothing, but be safe) is stored and announced once."""
    request_id = str(payload.get("id") or "")
    agent = Agent.objects.filter(pk=agent_id, sandbox_profile=SandboxProfile.NEMOCLAW).first()
    if not request_id or agent is None:
        return None
    request = payload.get("request") if isinstance(payload.get("request"), dict) else {}
    decisions = [str(d) for d in request.get("allowedDecisions") or [] if isinstance(d, str)]
    try:
        with transaction.atomic():
            approval = SandboxApproval.objects.create(
                agent=agent,
                request_id=request_id[:200],
                kind="exec",
                command=str(request.get("command") or ""),
                cwd=str(request.get("cwd") or ""),
                allowed_decisions=decisions,
                created_at=_moment(payload.get("createdAtMs")) or timezone.now(),
                expires_at=_moment(payload.get("expiresAtMs")),
            )
            agent_event(agent, "sandbox.approval_requested",
                        f"Agent {agent.name} asks to run: {approval.command[:200]}",
                        requestId=approval.request_id, approvalKind=approval.kind, command=approval.command,
                        cwd=approval.cwd, expiresAt=approval.expires_at.isoformat() if approval.expires_at else None)
    except IntegrityError:
        return None
    return approval


def approval_resolved_record(*, agent_id, payload: dict) -> None:
    """The runtime's answer, whoever gave it. A decision Fleet made is already recorded; one
    without a decision means the runtime gave up (expired)."""
    request_id = str(payload.get("id") or "")
    decision = str(payload.get("decision") or "")
    status = STATUS_OF_RUNTIME_DECISION.get(decision, ApprovalStatus.EXPIRED)
    SandboxApproval.objects.filter(agent_id=agent_id, request_id=request_id, status=ApprovalStatus.PENDING).update(
        status=status, runtime_decision=decision, decided_at=timezone.now())


def approvals_expire(*, agent: Agent | None = None) -> int:
    """Mark pending requests past their deadline expired (the runtime denies them by then)."""
    pending = SandboxApproval.objects.filter(status=ApprovalStatus.PENDING, expires_at__lt=timezone.now())
    if agent is not None:
        pending = pending.filter(agent=agent)
    return pending.update(status=ApprovalStatus.EXPIRED, decided_at=timezone.now())


def approvals_forget_pending(*, agent_id) -> int:
    """A runtime that (re)started holds no pending request of before: they can no longer be decided."""
    return SandboxApproval.objects.filter(agent_id=agent_id, status=ApprovalStatus.PENDING).update(
        status=ApprovalStatus.EXPIRED, decided_at=timezone.now())


def approval_decide(*, agent: Agent, request_id: str, decision: str, user) -> SandboxApproval:
    """Resolve a pending request on the runtime (approve: allow-once, deny: deny) and record who
    decided. 404 unknown, 409 decided or expired (also when the runtime no longer holds it)."""
    runtime_decision = RUNTIME_DECISION[decision]
    gone = None
    with transaction.atomic():
        approval = (SandboxApproval.objects.select_for_update()
                    .filter(agent=agent, request_id=request_id).first())
        if approval is None:
            raise NotFound("No approval request with this id.")
        if approval.status == ApprovalStatus.PENDING and approval.expires_at and approval.expires_at < timezone.now():
            approval.status, approval.decided_at = ApprovalStatus.EXPIRED, timezone.now()
            approval.save(update_fields=["status", "decided_at"])
        if approval.status == ApprovalStatus.EXPIRED:
            gone = ApprovalExpired()
        elif approval.status != ApprovalStatus.PENDING:
            raise ApprovalDecided(f"This approval request was already {approval.status}.")
        else:
            try:
                gateway_for(agent).approval_resolve(approval.request_id, runtime_decision)
            except GatewayError as exc:
                if not any(marker in str(exc).lower() for marker in _GONE_MARKERS):
                    raise
                approval.status, approval.decided_at = ApprovalStatus.EXPIRED, timezone.now()
                approval.save(update_fields=["status", "decided_at"])
                gone = ApprovalExpired("The runtime no longer holds this request (it expired).")
            else:
                approval.status = STATUS_OF_RUNTIME_DECISION[runtime_decision]
                approval.runtime_decision = runtime_decision
                approval.decided_by = user
                approval.decided_at = timezone.now()
                approval.save(update_fields=["status", "runtime_decision", "decided_by", "decided_at"])
    if gone is not None:  # raised after the commit, so the expired mark stays
        raise gone
    return approval
