"""What the model gateway keeps: each agent's limits, the calls in flight, the traffic by hour."""

from __future__ import annotations

import uuid

from django.db import models


class GatewayLimits(models.Model):
    """An agent's limits at the gateway: calls and tokens per minute (null: none), and the only
    models it may call (empty: any model of its key)."""

    agent = models.OneToOneField("agents.Agent", on_delete=models.CASCADE, primary_key=True,
                                 related_name="model_gateway_limits")
    requests_per_minute = models.PositiveIntegerField(null=True, blank=True)
    tokens_per_minute = models.PositiveIntegerField(null=True, blank=True)
    allowed_models = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "model gateway limits"
        verbose_name_plural = "model gateway limits"

    def __str__(self) -> str:
        return f"Model gateway limits of agent {self.agent_id}"


class Reservation(models.Model):
    """The worst-case cost of one call in flight, counted against the agent's budgets beside what
    it has spent, until the call is settled at its real cost (then the row goes). A row whose
    process died lapses at `expires_at`."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)  # the call's request id
    # No index of its own: model_gw_reservation_idx starts with it (one index fewer to write per call).
    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="+", db_index=False)
    worst_micros = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=("agent", "expires_at"), name="model_gw_reservation_idx")]

    def __str__(self) -> str:
        return f"Reservation {self.id} of agent {self.agent_id}"


class TrafficHour(models.Model):
    """How many calls of one agent ended one way in one hour: `forwarded`, or the code of a
    refusal (budget_exceeded, rate_limited, model_not_allowed, ...) or of a failed upstream."""

    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="+")
    hour = models.DateTimeField()
    outcome = models.CharField(max_length=40)
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=("agent", "hour", "outcome"), name="model_gw_traffic_unique")]

    def __str__(self) -> str:
        return f"{self.hour:%Y-%m-%d %H}:00 {self.outcome}: {self.count}"
