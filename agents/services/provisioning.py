"""The provisioning job's logic: queued -> deploying -> workload created -> ready -> running.

No step waits while it holds a worker: the job creates the workload and takes a first look;
while the runtime starts, each later look is a task of its own scheduled a moment later
(agents.tasks.await_agent_ready), against the deadline kept on the row (ready_deadline_at), so
a worker restart resumes the wait and a burst of deploys never fills the workers.

Guards that make the job safe to run twice (acks_late redelivery, retries):
- the claim is a compare-and-swap queued -> deploying; a job finding `deploying` is a
  redelivery or retry of the same job and continues; any other status means nothing to do;
- `backend.create` is idempotent by the `fleet.agent_id` label, and the usage token is
  derived (agents.gateway.tokens.usage_token_for), so a rerun injects the same secrets;
- every status write after the claim is made under the row lock and only from `deploying`:
  a stop that landed meanwhile wins, and the job leaves the workload stopped (a delete: removed).

Transient engine errors propagate to the task, which retries with backoff; anything else
ends in `error` with a readable `last_error` and an `agent.error` event.

At most AGENT_STARTS_PER_TARGET deploys of one deploy target are `deploying` at once (0: no
bound): a runtime's start is CPU-bound, and a hundred started together on a small host all take
so long that some pass their ready deadline. A job that finds its target full leaves the agent
`queued` (its deadline moved on, so the reconciler does not take it over) and is published again
a moment later (StartDeferred); jobs of other targets are not held. Two jobs may claim the last
slot at once, so the bound can be passed by the provision workers' concurrency, never more.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..backends.base import BackendError, BackendUnreachable, LiveState, Placement, RuntimeBackend
from ..backends.engine import backend_of
from ..deploy_progress import CREATING, HANDSHAKE, PREPARING, WAITING, deploy_step_set
from ..events import agent_event
from ..files.restore import RestoreImpossible, migration_state_restore
from ..gateway import gateway_readiness
from ..gateway.tokens import usage_token_digest, usage_token_for
from ..models import Agent, Status
from .handshake import agent_handshake
from .transitions import node_record, status_swap
from .workload import workload_spec_build

logger = logging.getLogger(__name__)

PROVISION_TASK = "agents.tasks.provision_agent"  # the job that calls agent_provision

# Between two looks at a starting workload; each look is a task of its own (never a sleep).
READY_POLL_FIRST_SECONDS = 0.5
READY_POLL_MAX_SECONDS = 2.0
TERMINAL_ENGINE_STATES = ("exited", "dead", "missing")


# A job whose target has no start free looks again after this long (jitter spreads the jobs
# that wait, so they do not all ask at once).
START_DEFERRAL_SECONDS = 1.0
START_DEFERRAL_JITTER_SECONDS = 1.0


class ProvisioningFailed(Exception):
    """The workload cannot come up; the message is shown to the user as last_error."""


@dataclass(frozen=True)
class StartDeferred:
    """The deploy's target has AGENT_STARTS_PER_TARGET deploys in flight: publish the job again
    after `seconds` (the agent stays `queued`)."""

    seconds: float


def start_deferral(agent_id) -> StartDeferred | None:
    """StartDeferred when the agent is still queued and its target has no start free."""
    limit = settings.AGENT_STARTS_PER_TARGET
    if limit <= 0:
        return None
    row = Agent.objects.filter(pk=agent_id, status=Status.QUEUED).values_list("execution_target_id", flat=True)
    target = row.first()
    if target is None:  # deploying already (a redelivery owns its start), or nothing to do
        return None
    if Agent.objects.filter(execution_target_id=target, status=Status.DEPLOYING).count() < limit:
        return None
    deadline = timezone.now() + timedelta(seconds=settings.AGENT_QUEUED_DEADLINE_SECONDS)
    Agent.objects.filter(pk=agent_id, status=Status.QUEUED).update(provision_deadline_at=deadline)
    return StartDeferred(START_DEFERRAL_SECONDS + random.uniform(0, START_DEFERRAL_JITTER_SECONDS))  # noqa: S311


def deploying_deadline():
    """When a `deploying` agent whose job gave no news since now is taken over (services.reconcile)."""
    ready_and_margin = settings.AGENT_READY_TIMEOUT_SECONDS + settings.AGENT_PROVISION_DEADLINE_MARGIN_SECONDS
    seconds = max(settings.AGENT_PROVISION_DEADLINE_SECONDS, ready_and_margin)
    return timezone.now() + timedelta(seconds=seconds)


def _claim(agent_id, job_id: str | None) -> Agent | None:
    """queued -> deploying for whichever job comes first, which then owns the deploy; a job
    finding it `deploying` continues only if it owns it (a retry or redelivery of the same
    message), or when called without a job id (directly, not by a task)."""
    owner = {"provision_job_id": job_id} if job_id else {}
    claimed = status_swap(
        agent_id, observed=Status.QUEUED, new=Status.DEPLOYING, last_error="",
        provision_deadline_at=deploying_deadline(), **owner,
    )
    if not claimed:
        current = Agent.objects.filter(pk=agent_id).values_list("status", "provision_job_id").first()
        if current is None or current[0] != Status.DEPLOYING:
            return None  # stopped, deleted or already provisioned: nothing to do
        if job_id and current[1] and current[1] != job_id:
            logger.info("Agent %s is deployed by job %s: job %s steps aside", agent_id, current[1], job_id)
            return None  # the reconciler handed the deploy to another job
        Agent.objects.filter(pk=agent_id, status=Status.DEPLOYING).update(provision_deadline_at=deploying_deadline())
    agent = Agent.objects.filter(pk=agent_id).first()
    if agent is None or agent.is_external:
        return None
    return agent


def _quietly(what: str, agent: Agent, operation) -> None:
    try:
        operation()
    except BackendError as exc:
        logger.warning("Could not %s the workload of agent %s: %s", what, agent.pk, exc)


def _settle_if_not_deploying(backend: RuntimeBackend, agent: Agent, status: str | None) -> bool:
    """After a stop or delete that raced the job: leave the workload stopped / removed."""
    if status == Status.DEPLOYING:
        return False
    if status is None:
        _quietly("remove", agent, lambda: backend.remove(agent))
    elif status == Status.STOPPED:
        _quietly("stop", agent, lambda: backend.stop(agent))
    return True


@transaction.atomic
def _record_placement(backend: RuntimeBackend, agent: Agent, placement: Placement) -> bool:
    """Store where the workload lives; False when a stop or delete got there first."""
    agent.container_id = placement.container_id
    agent.container_name = placement.container_name
    agent.node = placement.node or ""
    agent.gateway_host_port = placement.host_port
    locked = Agent.objects.select_for_update().filter(pk=agent.pk).first()
    if locked is None:
        return not _settle_if_not_deploying(backend, agent, None)
    Agent.objects.filter(pk=agent.pk).update(
        container_id=agent.container_id,
        container_name=agent.container_name,
        node=agent.node,
        gateway_host_port=agent.gateway_host_port,
    )
    return not _settle_if_not_deploying(backend, agent, locked.status)


def _leave_if_not_deploying(backend: RuntimeBackend, agent: Agent) -> bool:
    """True (after leaving the workload as a stop or delete that raced the job wants it) when
    the agent is no longer `deploying`."""
    if Agent.objects.filter(pk=agent.pk, status=Status.DEPLOYING).exists():
        return False
    with transaction.atomic():
        status = Agent.objects.select_for_update().filter(pk=agent.pk).values_list("status", flat=True).first()
        return _settle_if_not_deploying(backend, agent, status)


def _look(backend: RuntimeBackend, agent: Agent) -> tuple[LiveState | None, str]:
    """The engine's reading if the workload runs and its runtime is ready (OpenClaw /readyz,
    Hermes's gateway), else None and what was seen. ProvisioningFailed if it stopped."""
    try:
        live = backend.inspect(agent)
    except BackendError as exc:
        return None, f"the engine could not be asked ({exc})"
    if live is None:
        return None, "not inspected yet"
    if live.crash_looping or live.status in TERMINAL_ENGINE_STATES:
        code = f" with code {live.exit_code}" if live.exit_code is not None else ""
        raise ProvisioningFailed(f"The runtime's container stopped{code} while starting ({live.status}).")
    if not live.running:
        return None, f"container {live.status}"
    readiness = gateway_readiness(agent, allow_starting=True)
    if readiness.ready:
        return live, ""
    return None, f"container {live.status}, runtime not ready: {'; '.join(readiness.failing) or 'starting'}"


def next_look_seconds(looks: int) -> float:
    """Soon at first (Hermes is ready in about 2 s), then every READY_POLL_MAX_SECONDS."""
    return min(READY_POLL_FIRST_SECONDS * 1.5**looks, READY_POLL_MAX_SECONDS)


@transaction.atomic
def _mark_running(backend: RuntimeBackend, agent: Agent, live: LiveState) -> None:
    locked = Agent.objects.select_for_update().filter(pk=agent.pk).first()
    if locked is None or locked.status != Status.DEPLOYING:
        _settle_if_not_deploying(backend, agent, locked.status if locked else None)
        return
    locked.status, locked.last_error = Status.RUNNING, ""
    locked.save(update_fields=["status", "last_error", "updated_at"])
    node_record(locked, live.node)  # where it runs now: the pod may have been placed after create
    agent_event(locked, "agent.running", f"Agent {locked.name} is running.")


def _deploy_step(agent_id, step: Callable[[], float | StartDeferred | None]) -> float | StartDeferred | None:
    """Run one step of a deploy: refusals and failures end it in `error`; a transient engine
    error propagates (the task retries with backoff, then calls agent_provision_fail)."""
    try:
        return step()
    except BackendError as exc:
        if exc.transient:
            raise
        agent_provision_fail(agent_id=agent_id, reason=f"The container engine refused the workload: {exc}")
    except (ProvisioningFailed, RestoreImpossible) as exc:
        agent_provision_fail(agent_id=agent_id, reason=str(exc))
    return None


def agent_provision(*, agent_id, job_id: str | None = None) -> float | StartDeferred | None:
    """The provisioning job's first step (agents.tasks.provision_agent, `job_id` its task id):
    claim the deploy, create the workload, take a first look. Answers the seconds after which
    to look again (agent_provision_look), StartDeferred when the target has no start free (the
    job runs again later), or None when the deploy is over or not this job's."""

    def step() -> float | StartDeferred | None:
        deferred = start_deferral(agent_id)
        if deferred is not None:
            return deferred
        agent = _claim(agent_id, job_id)
        if agent is None:
            return None
        deploy_step_set(agent.pk, PREPARING)
        backend = backend_of(agent)
        usage_token = usage_token_for(agent)
        Agent.objects.filter(pk=agent.pk).update(usage_token_digest=usage_token_digest(usage_token))
        spec = workload_spec_build(agent=agent, usage_token=usage_token)
        migration_state_restore(backend=backend, agent=agent, spec=spec)  # before the runtime first starts
        deploy_step_set(agent.pk, CREATING)  # the backend says PULLING if it must fetch the image first
        placement = backend.create(agent, spec)
        if not _record_placement(backend, agent, placement):
            return None
        ready_by = timezone.now() + timedelta(seconds=settings.AGENT_READY_TIMEOUT_SECONDS)
        Agent.objects.filter(pk=agent.pk).update(ready_deadline_at=ready_by)
        deploy_step_set(agent.pk, WAITING)
        return _look_once(backend, agent, looks=0)

    return _deploy_step(agent_id, step)


def agent_provision_look(*, agent_id, job_id: str | None = None, looks: int = 0) -> float | None:
    """One look at a starting workload (agents.tasks.await_agent_ready, scheduled again while
    it answers seconds): running once the runtime is ready, `error` past the row's
    ready_deadline_at. None when the deploy is over or owned by another job."""

    def step() -> float | None:
        agent = Agent.objects.filter(pk=agent_id).first()
        if agent is None or agent.is_external:
            return None
        if job_id and agent.provision_job_id and agent.provision_job_id != job_id:
            return None  # the reconciler handed the deploy to another job
        return _look_once(backend_of(agent), agent, looks=looks)

    return _deploy_step(agent_id, step)


def _look_once(backend: RuntimeBackend, agent: Agent, *, looks: int) -> float | None:
    if _leave_if_not_deploying(backend, agent):
        return None
    live, seen = _look(backend, agent)
    if live is not None:
        deploy_step_set(agent.pk, HANDSHAKE)
        agent_handshake(agent=agent)  # records the runtime's version; a refused token ends in error
        _mark_running(backend, agent, live)
        return None
    ready_by = Agent.objects.filter(pk=agent.pk).values_list("ready_deadline_at", flat=True).first()
    if ready_by is not None and timezone.now() >= ready_by:
        timeout = settings.AGENT_READY_TIMEOUT_SECONDS
        raise ProvisioningFailed(f"The runtime did not become ready within {timeout:g} s ({seen}).")
    return next_look_seconds(looks)


def agent_provision_retrying(*, agent_id, reason: str) -> None:
    """While the job waits to retry a transient engine error, say why the deploy is taking
    long; the status stays `deploying` and reaching `running` clears the reason."""
    Agent.objects.filter(pk=agent_id, status=Status.DEPLOYING).update(
        last_error=f"Retrying: {reason}"[:2000], updated_at=timezone.now(), provision_deadline_at=deploying_deadline()
    )


def provision_failure_reason(exc: BackendError) -> str:
    """The last_error of a deploy whose transient engine errors outlived the retries: says
    what failed (an unreachable engine, an image that could not be pulled, a refusal)."""
    if isinstance(exc, BackendUnreachable):
        return f"The container engine could not be reached: {exc}"
    return f"The container engine kept failing the deploy: {exc}"


@transaction.atomic
def agent_provision_fail(*, agent_id, reason: str) -> None:
    """End a deploy in `error` with a readable reason (only if it is still being deployed)."""
    agent = Agent.objects.select_for_update().filter(pk=agent_id).first()
    if agent is None or agent.status not in (Status.QUEUED, Status.DEPLOYING):
        return
    agent.status, agent.last_error = Status.ERROR, reason[:2000]
    agent.save(update_fields=["status", "last_error", "updated_at"])
    agent_event(agent, "agent.error", f"Agent {agent.name} failed to deploy: {reason}", reason=reason)
