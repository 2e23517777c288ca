"""Input and output shapes of the budget routes (and of the console's budget form). BudgetOut is
also the budget an `agent.budget_soft_exceeded` event carries (agents.budgets.enforcement)."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from rest_framework import serializers

from fleet.api.serializers import NumberField, TimestampField

from ..models import BudgetPeriod

MAX_LIMIT_USD = 1_000_000_000
MIN_LIMIT_USD = Decimal("0.000001")  # one micro-dollar: money is stored in micro-dollars


class BudgetInput(serializers.Serializer):
    period = serializers.ChoiceField(choices=BudgetPeriod.values)
    limit_usd = NumberField()
    soft_threshold_pct = NumberField(required=False)

    def validate_limit_usd(self, value) -> Decimal:
        amount = Decimal(str(value))
        if amount <= 0:
            raise serializers.ValidationError("Must be a positive number of USD.")
        if amount < MIN_LIMIT_USD:
            raise serializers.ValidationError("Must be at least 0.000001 USD.")
        if amount > MAX_LIMIT_USD:
            raise serializers.ValidationError(f"At most {MAX_LIMIT_USD} USD.")
        return amount

    def validate_soft_threshold_pct(self, value) -> Decimal:
        # The range first: quantizing a huge number (1e30) overflows Decimal's precision (a 500).
        pct = Decimal(str(value))
        if not 1 <= pct <= 100:
            raise serializers.ValidationError("Must be between 1 and 100.")
        pct = pct.quantize(Decimal("0.01"), ROUND_HALF_UP)
        if not 1 <= pct <= 100:  # 0.996 rounds to 1.00, 100.004 to 100.00: still in range
            raise serializers.ValidationError("Must be between 1 and 100.")
        return pct


class BudgetOut(serializers.Serializer):
    """A budget with the agent's spend in its current period."""

    # Reads an agents.budgets.selectors.BudgetState.
    id = serializers.UUIDField(source="budget.pk")
    period = serializers.CharField(source="budget.period", help_text="daily, weekly or monthly")
    limitUsd = NumberField(source="limit_usd", help_text="the hard cap")  # noqa: N815 - the spec's names
    softThresholdPct = serializers.FloatField(source="budget.soft_threshold_pct")  # noqa: N815
    currentUsd = NumberField(source="current_usd")  # noqa: N815
    pct = NumberField(help_text="spend as percent of the cap")
    bucket = serializers.CharField(help_text="none, soft or hard")
    resetsAt = TimestampField(source="window.resets_at", help_text="when the period ends")  # noqa: N815


class BudgetReportOut(serializers.Serializer):
    """Every budget of the agent, and why the agent is paused (null when it is not)."""

    budgets = BudgetOut(many=True)
    pausedReason = serializers.CharField(source="paused_reason", allow_null=True)  # noqa: N815
