"""Reads of budgets with their current spend, in one aggregate query for any number of agents.

Spend comes from the per-agent rollups: a monthly budget's from its agent's month
(AgentSpendMonth), a daily one's from its day, a weekly one's from its week's days
(AgentSpendDay), joined to the budgets; ten thousand budgets cost one statement, never one per
agent, and never a sum over the month's days.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime

from django.db import connection
from django.utils import timezone

from fleet.errors import NotFound

from ..models import Agent, AgentSpendDay, AgentSpendMonth, Budget, BudgetPeriod
from ..models.money import micros_to_usd
from .periods import PeriodWindow, month_start, period_windows

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

    @property
    def limit_usd(self) -> float:
        return micros_to_usd(self.budget.limit_micros)

    @property
    def current_usd(self) -> float:
        return micros_to_usd(self.spent_micros)


@dataclass(frozen=True)
class BudgetReport:
    budgets: list[BudgetState]
    paused_reason: str | None


def _budget_spend_sql(windows: dict[str, PeriodWindow], *, agent_ids: list | None):
    """(sql, params) of rows (budget id, spent micros in its current period, limit_micros,
    soft_threshold_pct), one statement for any number of agents: a monthly budget reads its
    agent's AgentSpendMonth row, a daily one its AgentSpendDay row (each window is one month,
    one day: one row or none), a weekly one sums its agent's days of the week, for the agents
    with a weekly budget only."""
    q = connection.ops.quote_name
    day = connection.ops.adapt_datefield_value
    budget, days, months = (q(model._meta.db_table) for model in (Budget, AgentSpendDay, AgentSpendMonth))
    daily, weekly, monthly = (windows[p] for p in (BudgetPeriod.DAILY, BudgetPeriod.WEEKLY, BudgetPeriod.MONTHLY))
    agents_in, agent_params = "", []
    if agent_ids is not None:
        agents_in = "IN ({})".format(", ".join(["%s"] * len(agent_ids)))
        agent_params = [Agent._meta.pk.get_db_prep_value(a, connection) for a in agent_ids]

    def only_agents(alias: str) -> str:
        return f" AND {alias}.agent_id {agents_in}" if agents_in else ""

    sql = (
        f"SELECT b.id, COALESCE(CASE b.period WHEN %s THEN d.cost_micros WHEN %s THEN w.spent "
        f"WHEN %s THEN m.cost_micros END, 0) AS spent, b.limit_micros, b.soft_threshold_pct "
        f"FROM {budget} b "
        f"LEFT JOIN {days} d ON d.agent_id = b.agent_id AND d.day = %s "
        f"LEFT JOIN {months} m ON m.agent_id = b.agent_id AND m.month = %s "
        f"LEFT JOIN (SELECT s.agent_id, SUM(s.cost_micros) AS spent FROM {days} s "
        f"WHERE s.day >= %s AND s.day < %s{only_agents('s')} AND s.agent_id IN "
        f"(SELECT wb.agent_id FROM {budget} wb WHERE wb.period = %s{only_agents('wb')}) "
        f"GROUP BY s.agent_id) w ON w.agent_id = b.agent_id"
    )
    params = [BudgetPeriod.DAILY.value, BudgetPeriod.WEEKLY.value, BudgetPeriod.MONTHLY.value,
              day(daily.start), day(monthly.start), day(weekly.start), day(weekly.end), *agent_params,
              BudgetPeriod.WEEKLY.value, *agent_params]
    if agents_in:
        sql += f" WHERE b.agent_id {agents_in}"
        params += agent_params
    return sql, params


def agent_spend_sql(*, agent_id, now: datetime) -> tuple[str, list]:
    """(sql, params) of one agent's budgets as rows (id, spent, limit_micros, soft_threshold_pct),
    spent in each budget's current period: for a statement that builds on the spend (the model
    gateway reserves against it in the same statement)."""
    return _budget_spend_sql(period_windows(now), agent_ids=[agent_id])


# The buckets of BudgetState, in SQL over _budget_spend_sql's rows.
_SOFT_REACHED = "spent * 100 >= limit_micros * soft_threshold_pct"
_HARD_REACHED = "spent >= limit_micros"


def _spend_query(windows: dict[str, PeriodWindow], *, agent_ids: list | None, at_least_soft: bool):
    """(budget id, spent micros) rows, only those at or over their soft threshold if asked."""
    sql, params = _budget_spend_sql(windows, agent_ids=agent_ids)
    where = f" WHERE {_SOFT_REACHED}" if at_least_soft else ""
    return f"SELECT id, spent FROM ({sql}) x{where}", params


@dataclass(frozen=True)
class BudgetCounts:
    total: int
    soft: int  # at or past the soft threshold, under the limit (Bucket.SOFT)
    exceeded: int  # at or past the limit (Bucket.HARD): enforcement pauses their agents


def budget_counts(*, now: datetime | None = None) -> BudgetCounts:
    """How many budgets there are, and how many are in each bucket for their current period:
    one statement, whatever the number of budgets and agents (the fleet dashboard)."""
    sql, params = _budget_spend_sql(period_windows(now or timezone.now()), agent_ids=None)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT COUNT(*), COUNT(*) FILTER (WHERE {_SOFT_REACHED} AND NOT {_HARD_REACHED}), "
            f"COUNT(*) FILTER (WHERE {_HARD_REACHED}) FROM ({sql}) x",
            params,
        )
        total, soft, exceeded = cursor.fetchone()
    return BudgetCounts(total=total, soft=soft, exceeded=exceeded)


@dataclass(frozen=True)
class MonthlySpend:
    agent_id: object
    agent_name: str
    spent_micros: int
    monthly_limit_micros: int | None  # the agent's monthly budget, None without one

    @property
    def spent_usd(self) -> float:
        return micros_to_usd(self.spent_micros)

    @property
    def monthly_limit_usd(self) -> float | None:
        return None if self.monthly_limit_micros is None else micros_to_usd(self.monthly_limit_micros)

    @property
    def pct(self) -> float | None:
        if not self.monthly_limit_micros:
            return None
        return round(self.spent_micros * 100 / self.monthly_limit_micros, 2)


@dataclass(frozen=True)
class FleetSpend:
    today_micros: int
    month_micros: int  # from the first of today's month on


def fleet_spend(*, today: date) -> FleetSpend:
    """What the whole fleet spent on `today` and from the first of its month on: one statement,
    that day's AgentSpendDay rows (by the day's index) and the month's AgentSpendMonth rows."""
    q = connection.ops.quote_name
    day = connection.ops.adapt_datefield_value
    days, months = q(AgentSpendDay._meta.db_table), q(AgentSpendMonth._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT (SELECT SUM(cost_micros) FROM {days} WHERE day = %s), "
            f"(SELECT SUM(cost_micros) FROM {months} WHERE month >= %s)",
            [day(today), day(month_start(today))],
        )
        today_micros, month_micros = cursor.fetchone()
    return FleetSpend(today_micros=int(today_micros or 0), month_micros=int(month_micros or 0))


def top_monthly_spenders(*, count: int, now: datetime | None = None) -> list[MonthlySpend]:
    """The `count` agents that spent most this month (UTC), most first, each with its monthly
    budget: one statement, the month's AgentSpendMonth rows (one range of its index) ranked,
    the top ones joined to their agent and budget."""
    month = period_windows(now or timezone.now())[BudgetPeriod.MONTHLY]
    q = connection.ops.quote_name
    months, agents, budget = (q(model._meta.db_table) for model in (AgentSpendMonth, Agent, Budget))
    sql = (
        f"WITH top AS (SELECT m.agent_id, m.cost_micros AS spent FROM {months} m "
        f"WHERE m.month = %s AND m.cost_micros > 0 ORDER BY m.cost_micros DESC, m.agent_id LIMIT %s) "
        f"SELECT top.agent_id, a.name, top.spent, b.limit_micros FROM top "
        f"JOIN {agents} a ON a.id = top.agent_id "
        f"LEFT JOIN {budget} b ON b.agent_id = top.agent_id AND b.period = %s "
        f"ORDER BY top.spent DESC, top.agent_id"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [connection.ops.adapt_datefield_value(month.start), count, BudgetPeriod.MONTHLY.value])
        rows = cursor.fetchall()
    return [MonthlySpend(Agent._meta.pk.to_python(agent_id), name, int(spent), limit)
            for agent_id, name, spent, limit in rows]


def budget_states(*, now: datetime | None = None, agent_ids: Iterable | None = None,
                  at_least_soft: bool = False, with_agent: bool = False) -> list[BudgetState]:
    """Budgets with their spend in the current period, daily/weekly/monthly per agent.

    `at_least_soft` keeps only budgets at or over their soft threshold (what enforcement
    acts on), filtered in SQL; `with_agent` loads each budget's agent too. One query for the
    spend, and one more for the budgets it returned (none when it returned nothing).
    """
    windows = period_windows(now or timezone.now())
    agent_ids = None if agent_ids is None else list(agent_ids)
    if agent_ids == []:
        return []
    sql, params = _spend_query(windows, agent_ids=agent_ids, at_least_soft=at_least_soft)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        spent = {Budget._meta.pk.to_python(budget_id): int(total) for budget_id, total in cursor.fetchall()}
    if not spent:
        return []
    if agent_ids is not None:
        budgets = Budget.objects.filter(agent_id__in=agent_ids)
    elif at_least_soft:
        budgets = Budget.objects.filter(pk__in=list(spent))  # the few over their soft line
    else:
        budgets = Budget.objects.all()
    budgets = budgets.defer("created_at", "updated_at")  # parsing 2 timestamps a row dominates big reads
    if with_agent:
        budgets = budgets.select_related("agent")
    states = [BudgetState(b, spent[b.pk], windows[b.period]) for b in budgets if b.pk in spent]
    states.sort(key=lambda s: (str(s.budget.agent_id), PERIOD_ORDER[s.budget.period]))
    return states


def agent_budget_report(*, agent: Agent, now: datetime | None = None) -> BudgetReport:
    """GET /agents/:id/budget: every configured period and whether a cap paused the agent."""
    return BudgetReport(budgets=budget_states(now=now, agent_ids=[agent.pk]), paused_reason=agent.paused_reason)


def budget_state(*, budget: Budget, now: datetime | None = None) -> BudgetState:
    return next(s for s in budget_states(now=now, agent_ids=[budget.agent_id]) if s.budget.pk == budget.pk)


def budget_of_agent(*, agent: Agent, budget_id) -> Budget:
    budget = Budget.objects.filter(agent_id=agent.pk, pk=budget_id).first()
    if budget is None:
        raise NotFound(BUDGET_NOT_FOUND)
    return budget

