"""Budget enforcement: the soft warning once per period, and the hard-cap pause.

Both the ingestion of usage (for the agent that reported it) and the sweep (beat, every
minute, for every agent) call in here:
- a budget at or over its soft threshold emits `agent.budget_soft_exceeded` once per period:
  a conditional UPDATE of `soft_notified_for` claims the event, so two callers never both send;
- an agent at 100% of any cap while `running` or `warning` is paused: `paused_reason =
  budget_exceeded` is written first (and committed), then the workload is stopped through the
  agents stop service, then `agent.budget_exceeded` is emitted. A failed stop emits
  `agent.budget_pause_failed` and the next sweep tries again. Adopted (external) agents have
  no lifecycle and are never paused.
One agent's failure is logged and never stops the sweep for the others.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from fleet.task_queue import task_named

from ..events import agent_event
from ..models import SERVING, Agent, Budget, PausedReason, WorkspaceAgent
from ..models.money import micros_to_usd
from ..services.lifecycle import agent_stop
from .selectors import BudgetState, budget_states
from .serializers import BudgetOut

logger = logging.getLogger(__name__)

PAUSE_TASK = "agents.budgets.pause"  # the job that calls budget_pause


@dataclass
class SweepReport:
    over_soft: int = 0
    soft_events: int = 0
    paused: int = 0
    pause_failed: int = 0
    errors: int = 0
    agents: list = field(default_factory=list)  # ids paused in this sweep


def _budget_data(state: BudgetState) -> dict:
    # The budget as the API shows it; event data is stored as JSON, so the timestamp as text.
    return {"budget": {**BudgetOut(state).data, "resetsAt": state.window.resets_at.isoformat()}}


def _soft_event(state: BudgetState, *, workspace_ids=None) -> None:
    budget, agent = state.budget, state.budget.agent
    agent_event(
        agent,
        "agent.budget_soft_exceeded",
        f"Agent {agent.name} has spent {state.pct}% of its {budget.period} budget "
        f"(${micros_to_usd(state.spent_micros)} of ${micros_to_usd(budget.limit_micros)}).",
        workspace_ids=workspace_ids,
        **_budget_data(state),
    )


def _soft_due(states: list[BudgetState]) -> list[BudgetState]:
    """Budgets over their soft line whose event for this period was not sent yet."""
    return [s for s in states if s.soft_reached and s.budget.soft_notified_for != s.window.start]


def budget_soft_notify(*, state: BudgetState) -> bool:
    """Emit the soft event for this budget's current period unless it was already sent."""
    claimed = (
        Budget.objects.filter(pk=state.budget.pk)
        .exclude(soft_notified_for=state.window.start)
        .update(soft_notified_for=state.window.start)
    )
    if claimed:
        _soft_event(state)
    return bool(claimed)


def budgets_soft_notify(*, states: list[BudgetState]) -> int:
    """The soft events of many budgets at once: claimed under row locks per period start (so a
    concurrent caller never sends one twice), workspaces read in one query. Returns how many."""
    due = _soft_due(states)
    return _soft_notify_due(due) if due else 0  # nothing due: not even a transaction


@transaction.atomic
def _soft_notify_due(due: list[BudgetState]) -> int:
    by_start: dict = defaultdict(list)
    for state in due:
        by_start[state.window.start].append(state)
    workspaces: dict = defaultdict(list)
    for agent_id, workspace_id in WorkspaceAgent.objects.filter(
        agent_id__in={s.budget.agent_id for s in due}
    ).values_list("agent_id", "workspace_id"):
        workspaces[agent_id].append(workspace_id)
    sent = 0
    for start, group in by_start.items():
        claimable = Budget.objects.select_for_update().filter(pk__in=[s.budget.pk for s in group])
        claimed = set(claimable.exclude(soft_notified_for=start).values_list("pk", flat=True))
        Budget.objects.filter(pk__in=claimed).update(soft_notified_for=start)
        for state in group:
            if state.budget.pk in claimed:
                _soft_event(state, workspace_ids=workspaces[state.budget.agent_id])
                sent += 1
    return sent


def _pause_claim(agent_id, *, only_unclaimed: bool = False) -> bool:
    """Write paused_reason on a pausable agent; True when this call changed the row."""
    agents = Agent.objects.filter(pk=agent_id, status__in=SERVING, is_external=False)
    if only_unclaimed:
        agents = agents.filter(paused_reason__isnull=True)
    return bool(agents.update(paused_reason=PausedReason.BUDGET_EXCEEDED, updated_at=timezone.now()))


def _over_cap(states: list[BudgetState]) -> list[BudgetState]:
    return [s for s in states if s.hard_reached]


def budget_pause(*, agent_id, now: datetime | None = None, over: list[BudgetState] | None = None) -> str:
    """Pause one agent if a cap is still reached: "paused", "failed" or "skipped".

    `over` is the caps the caller just read (the sweep); without it they are read again.
    Call outside a transaction: the claim must be committed before the engine is called,
    so a crash mid-stop still leaves the reason on record for the next sweep.
    """
    if over is None:
        over = _over_cap(budget_states(now=now, agent_ids=[agent_id], at_least_soft=True, with_agent=True))
    if not over:
        # A limit raised (or a budget removed) since the claim: the agent keeps running.
        Agent.objects.filter(pk=agent_id, status__in=SERVING, paused_reason=PausedReason.BUDGET_EXCEEDED).update(
            paused_reason=None, updated_at=timezone.now()
        )
        return "skipped"
    if not _pause_claim(agent_id):
        return "skipped"
    agent = Agent.objects.get(pk=agent_id)
    budgets = [_budget_data(s)["budget"] for s in over]
    try:
        agent = agent_stop(agent=agent, paused_reason=PausedReason.BUDGET_EXCEEDED)
    except Exception as exc:  # the engine, the network, a bug: record it and retry next sweep
        logger.warning("Budget pause of agent %s failed: %s", agent_id, exc)
        agent_event(agent, "agent.budget_pause_failed",
                    f"Agent {agent.name} reached a budget cap but could not be stopped: {exc}",
                    reason=str(exc), budgets=budgets)
        return "failed"
    agent_event(agent, "agent.budget_exceeded",
                f"Agent {agent.name} reached its {over[0].budget.period} budget cap and was paused.",
                budgets=budgets)
    return "paused"


def budget_check_agent(*, agent_id, now: datetime | None = None) -> bool:
    """After usage lands (in the ingestion transaction): soft events now; a reached cap on a
    running agent is claimed here and the stop goes to a worker after commit. True if so."""
    states = budget_states(now=now, agent_ids=[agent_id], at_least_soft=True, with_agent=True)
    for state in _soft_due(states):
        budget_soft_notify(state=state)
    if not _over_cap(states) or not _pause_claim(agent_id, only_unclaimed=True):
        return False
    task_named(PAUSE_TASK).delay_on_commit(str(agent_id))
    return True


def budgets_sweep(*, now: datetime | None = None) -> SweepReport:
    """One sweep over every budget at or over its soft threshold (one aggregate read)."""
    now = now or timezone.now()
    report = SweepReport()
    states = budget_states(now=now, at_least_soft=True, with_agent=True)
    report.over_soft = len(states)
    report.soft_events = _soft_events_sent(states, report)
    over_cap: dict = defaultdict(list)
    for state in states:
        agent = state.budget.agent
        if state.hard_reached and agent.status in SERVING and not agent.is_external:
            over_cap[agent.pk].append(state)
    for agent_id, over in over_cap.items():
        try:
            outcome = budget_pause(agent_id=agent_id, now=now, over=over)
        except Exception:
            report.errors += 1
            logger.exception("Budget pause crashed for agent %s", agent_id)
            continue
        if outcome == "paused":
            report.paused += 1
            report.agents.append(agent_id)
        elif outcome == "failed":
            report.pause_failed += 1
    return report


def _soft_events_sent(states: list[BudgetState], report: SweepReport) -> int:
    """All soft events in one transaction; if that fails, budget by budget, so that one bad
    budget cannot hold back the others' warnings."""
    try:
        return budgets_soft_notify(states=states)
    except Exception:
        logger.exception("Budget soft events failed as a batch; sending them one by one")
    sent = 0
    for state in _soft_due(states):
        try:
            with transaction.atomic():
                sent += budget_soft_notify(state=state)
        except Exception:
            report.errors += 1
            logger.exception("Budget soft check failed for budget %s", state.budget.pk)
    return sent
