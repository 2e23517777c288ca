"""Celery tasks of stats history; beat runs them (see agents.stats.periodic)."""

from __future__ import annotations

import logging

from celery import shared_task

from .services import stats_purge, stats_sample_tick

logger = logging.getLogger(__name__)

SAMPLE_TASK = "agents.stats.sample"
PURGE_TASK = "agents.stats.purge"


@shared_task(name=SAMPLE_TASK, soft_time_limit=30, time_limit=40)
def stats_sample() -> None:
    report = stats_sample_tick()
    if report.ran:
        # Every 10 s: a tick that went well is worth a line only at DEBUG.
        level = logging.WARNING if report.failed or report.timed_out else logging.DEBUG
        logger.log(
            level,
            "stats tick: %d agents, %d stored, %d failed, %d timed out, %d skipped in %.3f s",
            report.agents, report.stored, report.failed, report.timed_out, report.skipped, report.seconds,
        )


@shared_task(name=PURGE_TASK, soft_time_limit=240, time_limit=270)
def stats_purge_expired() -> None:
    deleted = stats_purge()
    if deleted:
        logger.info("stats purge: %d samples older than 24 h deleted", deleted)
