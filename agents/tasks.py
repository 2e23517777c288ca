"""Celery tasks: thin wrappers that load by id and call a service.

Tasks sit above the services, as views do; a service starts one by its name
(fleet.task_queue)."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError

from .backends.base import BackendError
from .files.drafts import migration_drafts_expire
from .services.engine_probe import engines_probe
from .services.handshake import FIRST_HANDSHAKE_TASK, agent_first_handshake
from .services.idempotency import deploy_keys_expire
from .services.monitoring import agents_monitor
from .services.provisioning import (
    PROVISION_TASK,
    StartDeferred,
    agent_provision,
    agent_provision_fail,
    agent_provision_look,
    agent_provision_retrying,
    provision_failure_reason,
)
from .services.reconcile import deploys_reconcile

logger = logging.getLogger(__name__)

# What a database that is restarting or unreachable raises: the job must run again, not end.
DATABASE_AWAY = (OperationalError, InterfaceError)


def _max_retries() -> int:
    return settings.AGENT_PROVISION_MAX_RETRIES


def _backoff_seconds(retries: int) -> float:
    base = settings.AGENT_PROVISION_RETRY_BACKOFF_SECONDS
    return min(base * 2**retries, 120)  # 5, 10, 20, 40, 80 s by default


@shared_task(name=PROVISION_TASK, bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None)
def provision_agent(self, agent_id: str) -> None:
    """Provision one agent's workload: create it, then hand the wait to await_agent_ready."""
    job_id = self.request.id
    _deploy_step(self, agent_id, job_id, 0, lambda: agent_provision(agent_id=agent_id, job_id=job_id))


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None)
def await_agent_ready(self, agent_id: str, job_id: str | None, looks: int) -> None:
    """One look at a starting workload for the job `job_id`; scheduled again (a countdown, never
    a sleep) while the runtime is not ready and its deadline, kept on the row, has not passed."""
    _deploy_step(self, agent_id, job_id, looks,
                 lambda: agent_provision_look(agent_id=agent_id, job_id=job_id, looks=looks))


def _deploy_step(task, agent_id: str, job_id: str | None, looks: int, step) -> None:
    """Run a step of a deploy; transient engine errors retry with backoff, a step that answers
    seconds has the next look scheduled that much later, and a deferred start its job again."""
    try:
        wait = step()
    except BackendError as exc:
        if task.request.retries < _max_retries():
            agent_provision_retrying(agent_id=agent_id, reason=str(exc))
            raise task.retry(exc=exc, countdown=_backoff_seconds(task.request.retries)) from exc
        agent_provision_fail(agent_id=agent_id, reason=provision_failure_reason(exc))
        return
    except DATABASE_AWAY as exc:  # the job is not done and nothing could record why: run it again
        logger.warning("Provisioning agent %s met an unreachable database; retrying: %s", agent_id, exc)
        raise task.retry(exc=exc, countdown=_backoff_seconds(min(task.request.retries, 4))) from exc
    except Exception as exc:  # a bug must still leave a readable reason, not a stuck "deploying"
        logger.exception("Provisioning agent %s failed", agent_id)
        try:
            agent_provision_fail(agent_id=agent_id, reason=f"Provisioning failed unexpectedly: {exc}")
        except DATABASE_AWAY as db_exc:  # never acknowledged and forgotten: retry (the reconciler is the net)
            logger.warning("Could not record the failure of agent %s's deploy; retrying: %s", agent_id, db_exc)
            raise task.retry(exc=db_exc, countdown=_backoff_seconds(min(task.request.retries, 4))) from db_exc
        return
    if isinstance(wait, StartDeferred):  # its target has no start free: the job again, a moment later
        provision_agent.apply_async(args=[agent_id], countdown=wait.seconds)
    elif wait is not None:
        await_agent_ready.apply_async(args=[agent_id, job_id, looks + 1], countdown=wait)


def retry_countdown(retries: int) -> float:
    return min(2.0**retries, 30.0)  # 1, 2, 4, 8, 16, 30, 30... s


@shared_task(name=FIRST_HANDSHAKE_TASK, bind=True, ignore_result=True, max_retries=None,
             soft_time_limit=60, time_limit=75)
def first_handshake(self, agent_id: str) -> None:
    """An adopted runtime's first handshake, published at adoption; a runtime that cannot be
    reached yet is tried again with a growing countdown (never a sleep), ADOPTED_HANDSHAKE_RETRIES
    times, after which the monitoring sweep keeps trying every period. Queue: `runtime`."""
    if not agent_first_handshake(agent_id=agent_id) and self.request.retries < settings.ADOPTED_HANDSHAKE_RETRIES:
        raise self.retry(countdown=retry_countdown(self.request.retries))


@shared_task(ignore_result=True)
def monitor_agents() -> dict:
    """Beat job (every 30 s, see AgentsConfig.periodic_tasks)."""
    return agents_monitor()


@shared_task(ignore_result=True)
def reconcile_deploys() -> dict:
    """Beat job (every minute): take over deploys whose job was lost."""
    return deploys_reconcile()


@shared_task(ignore_result=True)
def probe_engines() -> dict:
    """Beat job (every 30 s): probe every engine and registered target (services.engine_probe)."""
    return engines_probe()


@shared_task(ignore_result=True)
def expire_migration_drafts() -> int:
    """Beat job (hourly): delete migration drafts past their 24 hours."""
    return migration_drafts_expire()


@shared_task(ignore_result=True)
def expire_idempotency_keys() -> int:
    """Beat job (hourly): delete deploy Idempotency-Keys past IDEMPOTENCY_KEY_TTL_HOURS."""
    return deploy_keys_expire()
