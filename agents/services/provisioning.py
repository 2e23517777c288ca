"""The provisioning job's logic: queued -> deploying -> workload created -> ready -> running.

Guards that make the job safe to run twice (acks_late redelivery, retries):
- the claim is a compare-and-swap queued -> deploying; a job finding `deploying` is a
  redelivery or retry of the same job and continues; any other status means nothing to do;
- `backend.create` is idempotent by the `fleet.agent_id` label, and the usage token is
  derived (agents.tokens.usage_token_for), so a rerun injects the same secrets;
- every status write after the claim is made under the row lock and only from `deploying`:
  a stop that landed meanwhile wins, and the job leaves the workload stopped (a delete: removed).

Transient engine errors propagate to the task, which retries with backoff; anything else
ends in `error` with a readable `last_error` and an `agent.error` event.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..backends.base import BackendError, BackendUnreachable, LiveState, Placement, RuntimeBackend
from ..deploy_progress import CREATING, HANDSHAKE, PREPARING, WAITING, deploy_step_set
from ..events import agent_event
from ..files.restore import RestoreImpossible, migration_state_restore
from ..gateway import gateway_readiness
from ..models import Agent, Status
from ..tokens import usage_token_digest, usage_token_for
from .engine import backend_of
from .handshake import agent_handshake
from .transitions import node_record, status_swap
from .workload import workload_spec_build

logger = logging.getLogger(__name__)

POLL_SECONDS = 0.5
TERMINAL_ENGINE_STATES = ("exited", "dead", "missing")


class ProvisioningFailed(Exception):
    """The workload cannot come up; the message is shown to the user as last_error."""


def _claim(agent_id) -> Agent | None:
    if not status_swap(agent_id, observed=Status.QUEUED, new=Status.DEPLOYING, last_error=""):
        current = Agent.objects.filter(pk=agent_id).values_list("status", flat=True).first()
        if current != Status.DEPLOYING:
            return None  # stopped, deleted or already provisioned: nothing to do
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


def _wait_until_up(backend: RuntimeBackend, agent: Agent) -> LiveState | None:
    """Poll until the workload runs and its runtime is ready (OpenClaw /readyz, Hermes's
    gateway): the engine's last reading then; None if the job should stop because the agent
    left `deploying`. ProvisioningFailed when it cannot come up in AGENT_READY_TIMEOUT_SECONDS."""
    timeout = float(settings.AGENT_READY_TIMEOUT_SECONDS)
    deadline = time.monotonic() + timeout
    last_seen = "not inspected yet"
    while True:
        status = Agent.objects.filter(pk=agent.pk).values_list("status", flat=True).first()
        if status != Status.DEPLOYING:
            with transaction.atomic():
                locked = Agent.objects.select_for_update().filter(pk=agent.pk).values_list("status", flat=True)
                _settle_if_not_deploying(backend, agent, locked.first())
            return None
        try:
            live = backend.inspect(agent)
        except BackendError as exc:
            live, last_seen = None, f"the engine could not be asked ({exc})"
        if live is not None:
            if live.crash_looping or live.status in TERMINAL_ENGINE_STATES:
                code = f" with code {live.exit_code}" if live.exit_code is not None else ""
                raise ProvisioningFailed(f"The runtime's container stopped{code} while starting ({live.status}).")
            if live.running:
                readiness = gateway_readiness(agent, allow_starting=True)
                if readiness.ready:
                    return live
                last_seen = f"container {live.status}, runtime not ready: {'; '.join(readiness.failing) or 'starting'}"
            else:
                last_seen = f"container {live.status}"
        if time.monotonic() >= deadline:
            raise ProvisioningFailed(f"The runtime did not become ready within {timeout:g} s ({last_seen}).")
        time.sleep(POLL_SECONDS)


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


def agent_provision(*, agent_id) -> None:
    """The body of the provisioning job (agents.tasks.provision_agent)."""
    agent = _claim(agent_id)
    if agent is None:
        return
    deploy_step_set(agent.pk, PREPARING)
    try:
        backend = backend_of(agent)
        usage_token = usage_token_for(agent)
        Agent.objects.filter(pk=agent.pk).update(usage_token_digest=usage_token_digest(usage_token))
        spec = workload_spec_build(agent=agent, usage_token=usage_token)
        migration_state_restore(backend=backend, agent=agent, spec=spec)  # before the runtime first starts
        deploy_step_set(agent.pk, CREATING)  # the backend says PULLING if it must fetch the image first
        placement = backend.create(agent, spec)
        if not _record_placement(backend, agent, placement):
            return
        deploy_step_set(agent.pk, WAITING)
        live = _wait_until_up(backend, agent)
        if live is not None:
            deploy_step_set(agent.pk, HANDSHAKE)
            agent_handshake(agent=agent)  # records the runtime's version; a refused token ends in error
            _mark_running(backend, agent, live)
    except BackendError as exc:
        if exc.transient:
            raise  # the task retries with backoff, then calls agent_provision_fail
        agent_provision_fail(agent_id=agent_id, reason=f"The container engine refused the workload: {exc}")
    except (ProvisioningFailed, RestoreImpossible) as exc:
        agent_provision_fail(agent_id=agent_id, reason=str(exc))


def agent_provision_retrying(*, agent_id, reason: str) -> None:
    """While the job waits to retry a transient engine error, say why the deploy is taking
    long; the status stays `deploying` and reaching `running` clears the reason."""
    Agent.objects.filter(pk=agent_id, status=Status.DEPLOYING).update(
        last_error=f"Retrying: {reason}"[:2000], updated_at=timezone.now()
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
