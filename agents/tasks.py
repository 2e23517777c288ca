"""Celery tasks: thin wrappers that load by id and call a service.

Services enqueue these tasks (they import this module); a task body imports the service it
calls when it runs, the one import kept inside a function, so the two never import each other
at load time."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

from .backends.base import BackendError

logger = logging.getLogger(__name__)


def _max_retries() -> int:
    return settings.AGENT_PROVISION_MAX_RETRIES


def _backoff_seconds(retries: int) -> float:
    base = settings.AGENT_PROVISION_RETRY_BACKOFF_SECONDS
    return min(base * 2**retries, 120)  # 5, 10, 20, 40, 80 s by default


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None)
def provision_agent(self, agent_id: str) -> None:
    """Provision one agent's workload; transient engine errors retry with backoff."""
    from .services.provisioning import (
        agent_provision,
        agent_provision_fail,
        agent_provision_retrying,
        provision_failure_reason,
    )

    try:
        agent_provision(agent_id=agent_id)
    except BackendError as exc:
        if self.request.retries < _max_retries():
            agent_provision_retrying(agent_id=agent_id, reason=str(exc))
            raise self.retry(exc=exc, countdown=_backoff_seconds(self.request.retries)) from exc
        agent_provision_fail(agent_id=agent_id, reason=provision_failure_reason(exc))
    except Exception as exc:  # a bug must still leave a readable reason, not a stuck "deploying"
        logger.exception("Provisioning agent %s failed", agent_id)
        agent_provision_fail(agent_id=agent_id, reason=f"Provisioning failed unexpectedly: {exc}")


@shared_task(ignore_result=True)
def monitor_agents() -> dict:
    """Beat job (every 30 s, see AgentsConfig.periodic_tasks)."""
    from .services.monitoring import agents_monitor

    return agents_monitor()


@shared_task(ignore_result=True)
def probe_engines() -> dict:
    """Beat job (every 30 s): probe every engine and registered target (services.engines)."""
    from .services.engines import engines_probe

    return engines_probe()


@shared_task(ignore_result=True)
def expire_migration_drafts() -> int:
    """Beat job (hourly): delete migration drafts past their 24 hours."""
    from .files.drafts import migration_drafts_expire

    return migration_drafts_expire()
