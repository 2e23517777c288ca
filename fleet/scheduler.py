"""Periodic jobs that are late or dropped are visible: `checks.scheduler` of /api/health and the
gauges `fleet_periodic_job_late{job}` and `fleet_periodic_job_seconds_since_run{job}`.

Two records say when a job last ran: beat's (django-celery-beat's `PeriodicTask.last_run_at`,
when it last sent the job; CELERY_BEAT_SYNC_EVERY=1 makes beat write it at every send) and the
worker's (the time a worker last finished the job, written to the cache by `task_postrun`, see
fleet.celery). A job is "late" when either is older than three of its periods: beat not sending
it (beat stopped, its row disabled elsewhere), or workers not running what beat sends (ticks
expired behind a burst, a worker missing). A job beat never sent is judged from when its row
was last written (`date_changed`: installed by setup_periodic_tasks). Only enabled jobs on an
interval schedule are judged. Words: "ok", "late".
"""

from __future__ import annotations

import logging
import time
from datetime import datetime
from functools import lru_cache

from django.apps import apps
from django.core.cache import cache
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

logger = logging.getLogger(__name__)

OK, LATE = "ok", "late"
PERIODS_BEFORE_LATE = 3
RAN_KEY = "fleet:periodic-ran:{task}"
_KEEP_SECONDS = 7 * 24 * 3600


@lru_cache(maxsize=1)
def periodic_task_names() -> frozenset[str]:
    """The Celery task names the apps declare as periodic jobs (AppConfig.periodic_tasks)."""
    return frozenset(job.task for config in apps.get_app_configs() for job in getattr(config, "periodic_tasks", ()))


def periodic_run_record(task_name: str, *, at: float | None = None) -> None:
    """A worker finished `task_name`: remember when, if it is a periodic job. Never raises."""
    if task_name not in periodic_task_names():
        return
    try:
        cache.set(RAN_KEY.format(task=task_name), time.time() if at is None else at, timeout=_KEEP_SECONDS)
    except Exception:  # the job ran; a cache that is away must not fail it
        logger.warning("Could not record the run of periodic job %s", task_name, exc_info=True)


def _worker_ran_at(task_names: list[str]) -> dict[str, float]:
    keys = {RAN_KEY.format(task=name): name for name in task_names}
    found = cache.get_many(list(keys))
    return {keys[key]: float(at) for key, at in found.items()}


def periodic_jobs_since_run(now: datetime | None = None) -> dict[str, tuple[float, float]]:
    """{job name: (seconds since it last ran by the older of the two records, its period)}."""
    now = now or timezone.now()
    rows = list(
        PeriodicTask.objects.filter(enabled=True, interval__isnull=False)
        .select_related("interval")
        .only("name", "task", "last_run_at", "date_changed", "interval__every", "interval__period")
    )
    worker_ran = _worker_ran_at(sorted({row.task for row in rows}))
    report = {}
    for row in rows:
        period = row.interval.schedule.run_every.total_seconds()
        if period <= 0:
            continue
        sent = row.last_run_at or row.date_changed
        since = (now - sent).total_seconds() if sent else 0.0
        if row.task in worker_ran:
            since = max(since, now.timestamp() - worker_ran[row.task])
        report[row.name] = (max(0.0, since), period)
    return report


def scheduler_report() -> dict[str, str]:
    """`checks.scheduler`: "ok" or "late" for every enabled periodic job."""
    return {
        name: LATE if since > PERIODS_BEFORE_LATE * period else OK
        for name, (since, period) in periodic_jobs_since_run().items()
    }


def late_jobs_gauge() -> dict[tuple[str], float]:
    return {(name,): 1.0 if word == LATE else 0.0 for name, word in scheduler_report().items()}


def since_run_gauge() -> dict[tuple[str], float]:
    return {(name,): since for name, (since, _) in periodic_jobs_since_run().items()}
