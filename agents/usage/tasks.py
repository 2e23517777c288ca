"""Celery tasks of usage; beat runs the pull sweep (see agents.usage.periodic)."""

from __future__ import annotations

import logging

from celery import shared_task

from .sweep import usage_pull_sweep

logger = logging.getLogger(__name__)

PULL_TASK = "agents.usage.pull"


@shared_task(name=PULL_TASK, soft_time_limit=240, time_limit=270)
def usage_pull_all() -> dict[str, int]:
    counts = usage_pull_sweep().as_dict()
    if counts["agents"]:
        logger.info("usage pull: %(agents)d agents, %(pulled)d keys pulled, %(unchanged)d unchanged, "
                    "%(failed)d failed", counts)
    return counts
