"""The `Idempotency-Key` of POST /api/agents/deploy: one caller's key, the agent it made and the
answer it got, so a retry within IDEMPOTENCY_KEY_TTL_HOURS gets that answer, not a second agent."""

from __future__ import annotations

from django.db import models


class DeployIdempotencyKey(models.Model):
    # Whose key: "user:<id>" for a session, "key:<api key id>" for a workspace API key.
    principal = models.CharField(max_length=64)
    key = models.CharField(max_length=255)
    # SHA-256 of the request's body: the same key with another body is refused (409).
    fingerprint = models.CharField(max_length=64)
    agent = models.ForeignKey("agents.Agent", null=True, on_delete=models.SET_NULL, related_name="+")
    status_code = models.PositiveSmallIntegerField(default=201)
    body = models.JSONField(null=True, blank=True)  # the first answer's body, once it was sent
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("principal", "key"), name="agents_deploy_idempotency_key_uniq"),
        ]
        indexes = [models.Index(fields=("created_at",), name="agents_deploy_idem_created_idx")]

    def __str__(self) -> str:
        return f"{self.principal} {self.key}"
