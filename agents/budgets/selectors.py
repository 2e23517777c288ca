"""Reads of budgets with their current spend, in one aggregate query for any number of agents.

Spend comes from the per-agent per-day rollup (AgentSpendDay), summed over each budget's
current UTC period by a correlated subquery on its (agent, day) index: ten thousand budgets
cost one statement, not one per agent (DESIGN.md section 9).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import (
    BigIntegerField,
    Case,
    DateField,
    DecimalField,
    ExpressionWrapper,
    F,
    OuterRef,
    QuerySet,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce
from django.utils import timezone

from fleet.api.errors import NotFound

from ..models import Agent, AgentSpendDay, Budget, BudgetPeriod
from ..usage.money import micros_to_usd
from .periods import PeriodWindow, period_windows

PERIOD_ORDER = {period: index for index, period in enumerate(BudgetPeriod.values)}
BUDGET_NOT_FOUND = "Budget not found."


class Bucket:
    NONE = "none"
    SOFT = "soft"
    HARD = "hard"


@dataclass(frozen=True)
class BudgetState:
    budget: Budget
    spent_micros: int
    window: PeriodWindow

    @property
    def hard_reached(self) -> bool:
        return self.spent_micros >= self.budget.limit_micros

    @property
    def soft_reached(self) -> bool:
        return self.spent_micros * 100 >= self.budget.limit_micros * self.budget.soft_threshold_pct

    @property
    def bucket(self) -> str:
        if self.hard_reached:
            return Bucket.HARD
        return Bucket.SOFT if self.soft_reached else Bucket.NONE

    @property
    def pct(self) -> float:
        return round(self.spent_micros * 100 / self.budget.limit_micros, 2)

    def body(self) -> dict:
        return {
            "id": self.budget.pk,
            "period": self.budget.period,
            "limitUsd": micros_to_usd(self.budget.limit_micros),
            "softThresholdPct": float(self.budget.soft_threshold_pct),
            "currentUsd": micros_to_usd(self.spent_micros),
            "pct": self.pct,
            "bucket": self.bucket,
            "resetsAt": self.window.resets_at,
        }


def _by_period(windows: dict[str, PeriodWindow], attribute: str) -> Case:
    return Case(
        *[When(period=period, then=Value(getattr(window, attribute))) for period, window in windows.items()],
        output_field=DateField(),
    )


def _budgets_with_spend(now: datetime) -> tuple[QuerySet[Budget], dict[str, PeriodWindow]]:
    windows = period_windows(now)
    spend = (
        AgentSpendDay.objects.filter(
            agent_id=OuterRef("agent_id"), day__gte=OuterRef("window_start"), day__lt=OuterRef("window_end")
        )
        .order_by()
        .values("agent_id")
        .annotate(total=Sum("cost_micros"))
        .values("total")
    )
    budgets = Budget.objects.annotate(
        window_start=_by_period(windows, "start"),
        window_end=_by_period(windows, "end"),
    ).annotate(spent=Coalesce(Subquery(spend, output_field=BigIntegerField()), Value(0)))
    return budgets, windows


def budget_states(*, now: datetime | None = None, agent_ids: Iterable | None = None,
                  at_least_soft: bool = False, with_agent: bool = False) -> list[BudgetState]:
    """Budgets with their spend in the current period, daily/weekly/monthly per agent.

    `at_least_soft` keeps only budgets at or over their soft threshold (what enforcement
    acts on), filtered in SQL; `with_agent` loads each budget's agent in the same query.
    """
    budgets, windows = _budgets_with_spend(now or timezone.now())
    if agent_ids is not None:
        budgets = budgets.filter(agent_id__in=list(agent_ids))
    if at_least_soft:
        budgets = budgets.alias(
            spent_x100=ExpressionWrapper(F("spent") * 100, output_field=BigIntegerField()),
            soft_line=ExpressionWrapper(
                F("limit_micros") * F("soft_threshold_pct"), output_field=DecimalField(max_digits=30, decimal_places=2)
            ),
        ).filter(spent_x100__gte=F("soft_line"))
    if with_agent:
        budgets = budgets.select_related("agent")
    states = [BudgetState(b, int(b.spent), windows[b.period]) for b in budgets]
    states.sort(key=lambda s: (str(s.budget.agent_id), PERIOD_ORDER[s.budget.period]))
    return states


def agent_budget_report(*, agent: Agent, now: datetime | None = None) -> dict:
    """GET /agents/:id/budget: every configured period and whether a cap paused the agent."""
    states = budget_states(now=now, agent_ids=[agent.pk])
    return {"budgets": [s.body() for s in states], "pausedReason": agent.paused_reason}


def budget_state(*, budget: Budget, now: datetime | None = None) -> BudgetState:
    return next(s for s in budget_states(now=now, agent_ids=[budget.agent_id]) if s.budget.pk == budget.pk)


def budget_of_agent(*, agent: Agent, budget_id) -> Budget:
    budget = Budget.objects.filter(agent_id=agent.pk, pk=budget_id).first()
    if budget is None:
        raise NotFound(BUDGET_NOT_FOUND)
    return budget

