"""Celery task of the model gateway: the hourly purge (beat)."""

from __future__ import annotations

import logging

from celery import shared_task

from .purge import gateway_purge

logger = logging.getLogger(__name__)


@shared_task(name="model_gateway.tasks.purge", soft_time_limit=300, time_limit=330)
def purge() -> None:
    lapsed, hours = gateway_purge()
    if lapsed or hours:
        logger.info("model gateway purge: %d lapsed reservations, %d traffic hours dropped", lapsed, hours)
