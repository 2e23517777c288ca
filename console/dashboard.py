"""The fleet dashboard (the console's home, UNFOLD["DASHBOARD_CALLBACK"]): one query per panel,
so it costs the same with ten agents or ten thousand (aggregates and short, indexed slices)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q
from django.utils import timezone

from agents.budgets.selectors import (
    BudgetCounts,
    MonthlySpend,
    budget_counts,
    fleet_spend,
    top_monthly_spenders,
)
from agents.models import Agent
from agents.models.agent import PausedReason, Status
from agents.models.money import micros_to_usd
from alerts.models import Delivery, DeliveryStatus
from fleet.models import Event

from .health import targets_health

RECENT_EVENTS = 12
ATTENTION_AGENTS = 10
FAILED_DELIVERIES = 8
TOP_SPENDERS = 5
ATTENTION = Q(status__in=(Status.ERROR, Status.WARNING)) | Q(paused_reason=PausedReason.BUDGET_EXCEEDED)


@dataclass(frozen=True)
class StatusCount:
    status: str
    count: int


def agents_by_status() -> dict:
    """Counts per status, and how many need attention (error, warning, paused by budget)."""
    counts = Agent.objects.aggregate(
        total=Count("id"),
        attention=Count("id", filter=ATTENTION),
        paused_by_budget=Count("id", filter=Q(paused_reason=PausedReason.BUDGET_EXCEEDED)),
        **{status: Count("id", filter=Q(status=status)) for status in Status.values},
    )
    return {
        "total": counts["total"],
        "attention": counts["attention"],
        "paused_by_budget": counts["paused_by_budget"],
        "statuses": [StatusCount(status, counts[status]) for status in Status.values],
    }


def agents_needing_attention() -> list[dict]:
    return list(
        Agent.objects.filter(ATTENTION)
        .order_by("-updated_at")
        .values("id", "name", "status", "paused_reason", "last_error", "updated_at")[:ATTENTION_AGENTS]
    )


def spend_panel(now=None) -> dict:
    """Fleet spend today and this month (UTC) from the per-agent rollups."""
    spent = fleet_spend(today=(now or timezone.now()).date())
    return {"today_usd": micros_to_usd(spent.today_micros), "month_usd": micros_to_usd(spent.month_micros)}


def budgets_panel(now=None) -> BudgetCounts:
    """How many budgets there are, how many are past their soft threshold (under the limit) and
    how many are exceeded (enforcement pauses their agents), each for its current period."""
    return budget_counts(now=now)


def top_spenders(now=None) -> list[MonthlySpend]:
    """The agents that spent most this month, each against its monthly budget (if it has one)."""
    return top_monthly_spenders(count=TOP_SPENDERS, now=now)


def recent_events() -> list[Event]:
    return list(Event.objects.filter(test=False).order_by("-occurred_at")[:RECENT_EVENTS])


def failed_deliveries() -> list[dict]:
    return list(
        Delivery.objects.filter(status=DeliveryStatus.FAILED)
        .order_by("-created_at")
        .values("id", "channel_type", "last_error", "created_at", "rule__name", "event__kind")[:FAILED_DELIVERIES]
    )


def dashboard_callback(request, context: dict) -> dict:
    context.update({
        "agents_panel": agents_by_status(),
        "attention_agents": agents_needing_attention(),
        "targets_panel": targets_health(),
        "spend_panel": spend_panel(),
        "budgets_panel": budgets_panel(),
        "top_spenders_panel": top_spenders(),
        "events_panel": recent_events(),
        "deliveries_panel": failed_deliveries(),
    })
    return context
