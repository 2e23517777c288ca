"""The reconciler: the database, not a broker message, is the record of a pending deploy.

A deploy is `queued` with a deadline (services.deploy.provisioning_enqueue); its job moves the
deadline on when it claims the agent and at each retry (services.provisioning). An agent still
`queued` or `deploying` past its deadline lost its job: a publish the broker refused, a worker
killed mid-provision, a broker that restarted without the message, a task that died while the
database was down. The reconciler (the beat job agents.tasks.reconcile_deploys) then takes it
over: a conditional update on the deadline it read (so two sweeps never both take one), a new
job id that owns the deploy from then on (a late job of the old one steps aside), and the job
published again. Provisioning adopts the container the lost job created (backends `create` is
idempotent by the agent's label), so an agent never gets a second one. After
AGENT_RECONCILE_MAX_TAKEOVERS takeovers the deploy ends in `error` with the reason.
"""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from fleet.task_queue import task_named

from ..models import Agent, Status
from .provisioning import PROVISION_TASK, agent_provision_fail, deploying_deadline

logger = logging.getLogger(__name__)

BATCH = 200  # agents taken over per sweep; the next sweep takes the rest
PENDING = (Status.QUEUED, Status.DEPLOYING)


def _overdue(now):
    """Pending deploys past their deadline (rows from before the deadline existed: by updated_at)."""
    stale_since = now - timedelta(seconds=settings.AGENT_QUEUED_DEADLINE_SECONDS)
    return (
        Agent.objects.filter(status__in=PENDING, is_external=False)
        .filter(Q(provision_deadline_at__lte=now) | Q(provision_deadline_at__isnull=True, updated_at__lte=stale_since))
        .order_by("provision_deadline_at")
        .values_list("pk", "status", "provision_deadline_at", "provision_takeovers")[:BATCH]
    )


def _next_deadline(status: str):
    if status == Status.QUEUED:
        return timezone.now() + timedelta(seconds=settings.AGENT_QUEUED_DEADLINE_SECONDS)
    return deploying_deadline()


def _give_up_reason(status: str, takeovers: int) -> str:
    return (
        f"The deploy made no progress (still {status}) after {takeovers} attempts to resume it; "
        "redeploy the agent."
    )


def deploys_reconcile() -> dict:
    """Take over every deploy past its deadline: {"taken_over": n, "failed": m, "unpublished": k}."""
    now = timezone.now()
    result = {"taken_over": 0, "failed": 0, "unpublished": 0}
    for agent_id, status, deadline, takeovers in _overdue(now):
        if takeovers >= settings.AGENT_RECONCILE_MAX_TAKEOVERS:
            agent_provision_fail(agent_id=agent_id, reason=_give_up_reason(status, takeovers))
            result["failed"] += 1
            continue
        job_id = str(uuid.uuid4())
        taken = Agent.objects.filter(pk=agent_id, status=status, provision_deadline_at=deadline).update(
            provision_deadline_at=_next_deadline(status),
            provision_job_id=job_id if status == Status.DEPLOYING else F("provision_job_id"),
            provision_takeovers=F("provision_takeovers") + 1,
            updated_at=timezone.now(),
        )
        if not taken:
            continue  # its job or another sweep moved it meanwhile
        try:
            task_named(PROVISION_TASK).apply_async(args=[str(agent_id)], task_id=job_id)
        except BrokerError as exc:
            # Still down: undo the count; the deadline moved, so the next sweeps try again.
            Agent.objects.filter(pk=agent_id, provision_takeovers__gt=0).update(
                provision_takeovers=F("provision_takeovers") - 1
            )
            logger.warning("The reconciler could not publish the deploy of agent %s: %s", agent_id, exc)
            result["unpublished"] += 1
            break  # the broker refuses: no use trying the others now
        logger.info("Deploy of agent %s (%s past its deadline) taken over by job %s", agent_id, status, job_id)
        result["taken_over"] += 1
    return result
