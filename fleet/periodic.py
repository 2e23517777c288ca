"""Periodic jobs are declared in code, by each app, and installed by one command.

An app lists its jobs as `periodic_tasks` on its AppConfig; the idempotent management
command `setup_periodic_tasks` (run at release) writes them to django-celery-beat.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class PeriodicJob:
    name: str  # unique, stable: the beat row is found by it
    task: str  # dotted Celery task name
    every_seconds: float
    kwargs: dict = field(default_factory=dict)
    expires_seconds: float | None = None  # a late tick is dropped, not queued up
