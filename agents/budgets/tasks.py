"""Celery tasks of budgets: the sweep (beat, every minute) and one agent's pause."""

from __future__ import annotations

import logging

from celery import shared_task

from .enforcement import PAUSE_TASK, budget_pause, budgets_sweep

logger = logging.getLogger(__name__)

SWEEP_TASK = "agents.budgets.sweep"


@shared_task(name=SWEEP_TASK, soft_time_limit=50, time_limit=58)
def sweep_budgets() -> None:
    report = budgets_sweep()
    if report.over_soft:
        logger.info(
            "budget sweep: %d over soft, %d soft events, %d paused, %d pause failures, %d errors",
            report.over_soft, report.soft_events, report.paused, report.pause_failed, report.errors,
        )


@shared_task(name=PAUSE_TASK, acks_late=True, soft_time_limit=120, time_limit=130)
def pause_over_budget(agent_id: str) -> str:
    """Enqueued by ingestion when usage takes a running agent over a cap."""
    return budget_pause(agent_id=agent_id)
