"""Output shapes of the budget routes. BudgetOut is also the budget an
`agent.budget_soft_exceeded` event carries (agents.budgets.enforcement)."""

from __future__ import annotations

from rest_framework import serializers

from fleet.api.serializers import NumberField, TimestampField


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
