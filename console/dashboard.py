"""The fleet dashboard (the console's home, UNFOLD["DASHBOARD_CALLBACK"]): one query per panel,
so it costs the same with ten agents or ten thousand (aggregates and short, indexed slices)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q, Sum
from django.utils import timezone

from agents.models import Agent, AgentSpendDay, Budget, BudgetPeriod
from agents.models.agent import PausedReason, Status
from agents.usage.money import micros_to_usd
from alerts.models import Delivery, DeliveryStatus
from fleet.models import Event

from .health import targets_health

RECENT_EVENTS = 12
ATTENTION_AGENTS = 10
FAILED_DELIVERIES = 8
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
    """Fleet spend today and this month (UTC) from the per-agent per-day rollup."""
    today = (now or timezone.now()).date()
    month_start = today.replace(day=1)
    spent = AgentSpendDay.objects.filter(day__gte=month_start).aggregate(
        today=Sum("cost_micros", filter=Q(day=today)), month=Sum("cost_micros"),
    )
    return {"today_usd": micros_to_usd(spent["today"] or 0), "month_usd": micros_to_usd(spent["month"] or 0)}


def budgets_panel() -> dict:
    """What the budgets allow: the sum of daily and of monthly limits, and how many there are."""
    limits = Budget.objects.aggregate(
        count=Count("id"),
        daily=Sum("limit_micros", filter=Q(period=BudgetPeriod.DAILY)),
        monthly=Sum("limit_micros", filter=Q(period=BudgetPeriod.MONTHLY)),
    )
    return {"count": limits["count"], "daily_usd": micros_to_usd(limits["daily"] or 0),
            "monthly_usd": micros_to_usd(limits["monthly"] or 0)}


def recent_events() -> list[Event]:
    return list(Event.objects.filter(test=False).order_by("-occurred_at")[:RECENT_EVENTS])


def failed_deliveries() -> list[dict]:
    return list(
        Delivery.objects.filter(status=DeliveryStatus.FAILED)
        .order_by("-created_at")
        .values("id", "channel_type", "last_error", "created_at", "rule__name", "event__kind")[:FAILED_DELIVERIES]
    )


def _pct(part: float, whole: float) -> int | None:
    return min(round(part * 100 / whole), 100) if whole else None


def dashboard_callback(request, context: dict) -> dict:
    spend, budgets = spend_panel(), budgets_panel()
    context.update({
        "agents_panel": agents_by_status(),
        "attention_agents": agents_needing_attention(),
        "targets_panel": targets_health(),
        "spend_panel": spend,
        "budgets_panel": budgets,
        "spend_today_pct": _pct(spend["today_usd"], budgets["daily_usd"]),
        "spend_month_pct": _pct(spend["month_usd"], budgets["monthly_usd"]),
        "events_panel": recent_events(),
        "deliveries_panel": failed_deliveries(),
    })
    return context
