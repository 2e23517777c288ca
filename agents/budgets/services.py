"""Writes of budgets: create or update the one budget of a period, remove one."""

from __future__ import annotations

from decimal import Decimal

from django.db import transaction

from ..models import Agent, Budget
from ..models.money import usd_to_micros
from .enforcement import budget_check_agent
from .selectors import budget_state


@transaction.atomic
def budget_upsert(*, agent: Agent, period: str, limit_usd: Decimal, soft_threshold_pct: Decimal) -> tuple[Budget, bool]:
    """Create the agent's budget for `period`, or update it (one per period). (budget, created).

    The soft warning is armed again when the spend is now below the new threshold, so crossing
    the new line warns once more; a cap already reached is acted on at once.
    """
    budget, created = Budget.objects.select_for_update().update_or_create(
        agent=agent,
        period=period,
        defaults={"limit_micros": usd_to_micros(limit_usd), "soft_threshold_pct": soft_threshold_pct},
    )
    state = budget_state(budget=budget)
    if budget.soft_notified_for is not None and not state.soft_reached:
        budget.soft_notified_for = None
        budget.save(update_fields=["soft_notified_for", "updated_at"])
    budget_check_agent(agent_id=agent.pk)
    return budget, created


@transaction.atomic
def budget_delete(*, budget: Budget) -> None:
    """Remove a cap. An agent it paused stays stopped until someone starts it."""
    budget.delete()
