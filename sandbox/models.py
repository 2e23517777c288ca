"""The nemoclaw sandbox's records: each agent's versioned policy and its approval requests."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class SandboxPolicy(models.Model):
    """One version of an agent's policy document (sandbox/policy.py); the highest is current.
    `applied_at` is set once that version reached the running runtime."""

    id = models.BigAutoField(primary_key=True)
    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="sandbox_policies")
    version = models.PositiveIntegerField()
    document = models.JSONField()
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    applied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=("agent", "version"), name="sandbox_policy_version_unique")]
        ordering = ("agent", "-version")

    def __str__(self) -> str:
        return f"policy v{self.version} of {self.agent_id}"


class ApprovalStatus(models.TextChoices):
    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"
    EXPIRED = "expired"


class SandboxApproval(models.Model):
    """An operator approval the runtime asked for (`exec.approval.requested`); `request_id` is
    the runtime's own id, which the API calls `requestId`."""

    id = models.BigAutoField(primary_key=True)
    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="sandbox_approvals")
    request_id = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, default="exec")
    command = models.TextField(blank=True, default="")
    cwd = models.TextField(blank=True, default="")
    allowed_decisions = models.JSONField(default=list)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=ApprovalStatus.choices, default=ApprovalStatus.PENDING)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    runtime_decision = models.CharField(max_length=20, blank=True, default="")

    class Meta:
        constraints = [models.UniqueConstraint(fields=("agent", "request_id"), name="sandbox_approval_unique")]
        indexes = [models.Index(fields=("agent", "status", "created_at"), name="sandbox_approval_pending")]
        ordering = ("created_at",)

    def __str__(self) -> str:
        return f"{self.kind} approval {self.request_id} ({self.status})"
