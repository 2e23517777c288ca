"""Beat jobs of usage, concatenated into AgentsConfig.periodic_tasks (names as plain strings:
the app config imports this before the app registry is ready)."""

from __future__ import annotations

from fleet.periodic import PeriodicJob

USAGE_PERIODIC_TASKS: tuple[PeriodicJob, ...] = (
    # Runtimes count cumulatively, so a dropped sweep loses nothing: the next one sees it all.
    PeriodicJob(name="agents.usage: pull", task="agents.usage.pull", every_seconds=300, expires_seconds=290),
)
