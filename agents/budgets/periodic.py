"""Beat job of budgets, concatenated into AgentsConfig.periodic_tasks (plain strings: the app
config imports this before the app registry is ready)."""

from __future__ import annotations

from fleet.periodic import PeriodicJob

BUDGET_PERIODIC_TASKS: tuple[PeriodicJob, ...] = (
    # Every minute: a manually restarted agent still over a cap is paused again within a minute.
    PeriodicJob(name="agents.budgets: sweep", task="agents.budgets.sweep", every_seconds=60, expires_seconds=55),
)
