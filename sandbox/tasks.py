"""Celery tasks of the sandbox app: thin wrappers over its services."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

from fleet.errors import FleetError

from .services.apply import APPLY_TASK, apply_later, policy_apply

logger = logging.getLogger(__name__)


@shared_task(name=APPLY_TASK, bind=True, acks_late=True, max_retries=None, ignore_result=True)
def sandbox_policy_apply(self, agent_id: str) -> None:
    """Apply an agent's stored policy to its runtime; retried with backoff while it comes up."""
    try:
        policy_apply(agent_id=agent_id)
    except FleetError as exc:
        if not apply_later(exc):
            raise
        if self.request.retries >= settings.SANDBOX_APPLY_MAX_RETRIES:
            logger.warning("Gave up applying the sandbox policy of agent %s: %s", agent_id, exc.message)
            return
        countdown = min(settings.SANDBOX_APPLY_RETRY_BACKOFF_SECONDS * 2 ** self.request.retries, 60)
        raise self.retry(exc=exc, countdown=countdown) from exc
