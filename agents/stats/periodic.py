"""Beat jobs of stats history, concatenated into AgentsConfig.periodic_tasks.

Task names are plain strings here so that the app config can import this module
before the app registry is ready.
"""

from __future__ import annotations

from fleet.periodic import PeriodicJob

STATS_PERIODIC_TASKS: tuple[PeriodicJob, ...] = (
    # Every 10 s (the spec's sampling period). A tick that could not start in time is
    # dropped, not queued behind the next one.
    PeriodicJob(name="agents.stats: sample", task="agents.stats.sample", every_seconds=10, expires_seconds=10),
    # Retention: 24 h. Batches keep each delete short; every 5 min keeps each run small.
    PeriodicJob(name="agents.stats: purge", task="agents.stats.purge", every_seconds=300, expires_seconds=300),
)
