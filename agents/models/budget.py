"""Spend budgets: one cap per agent and calendar period (UTC day, ISO week, month)."""

from __future__ import annotations

import uuid
from decimal import Decimal

from django.db import models

from .agent import Agent
from .money import micros_to_usd

DEFAULT_SOFT_THRESHOLD_PCT = Decimal(80)


class BudgetPeriod(models.TextChoices):
    DAILY = "daily"
    WEEKLY = "weekly"
    MONTHLY = "monthly"


class Budget(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="budgets", db_index=False)
    period = models.CharField(max_length=10, choices=BudgetPeriod.choices)
    limit_micros = models.BigIntegerField(help_text="Hard cap in micro-dollars.")
    soft_threshold_pct = models.DecimalField(max_digits=5, decimal_places=2, default=DEFAULT_SOFT_THRESHOLD_PCT)
    # Start of the period whose soft event was sent: the event goes out once per period.
    soft_notified_for = models.DateField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=("agent", "period"), name="agents_budget_one_per_period")]

    def __str__(self) -> str:
        return f"{self.period} budget of {self.agent_id}"

    @property
    def limit_usd(self) -> float:
        return micros_to_usd(self.limit_micros)
