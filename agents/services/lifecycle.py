"""Lifecycle of a provisioned agent: start, stop, restart, redeploy, delete, and reconcile.

Each action takes the agent's row lock (select_for_update) for its whole duration, engine
call included, so concurrent calls on one agent run one after the other, never interleaved.
Adopted (external) agents have no lifecycle: 400 invalid_state; deleting only deregisters.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import transaction

from accounts.deletion import UserHoldings, named
from fleet.errors import (
    Conflict,
    DaemonUnreachable,
    FleetError,
    InvalidState,
    NoContainer,
    NoContainerToInspect,
    NotFound,
)

from ..backends.base import BackendError
from ..backends.engine import CONTAINER_GONE, backend_of, engine_call
from ..events import agent_event
from ..gateway import GatewayUnsupported, gateway_for
from ..models import IN_FLIGHT, SERVING, Agent, Status
from ..proxy.hosts import proxy_origin
from ..selectors import AGENT_NOT_FOUND, agent_workspace_ids
from .deploy import provisioning_enqueue, publishes_after_commit
from .transitions import node_record, status_swap

logger = logging.getLogger(__name__)

REDEPLOYABLE = (Status.WARNING, Status.ERROR, Status.STOPPED)


def agent_lock(agent_id) -> Agent:
    """The agent's row, locked until the transaction ends (call inside transaction.atomic)."""
    agent = Agent.objects.select_for_update().filter(pk=agent_id).first()
    if agent is None:
        raise NotFound(AGENT_NOT_FOUND)
    return agent


def _refuse_external(agent: Agent) -> None:
    if agent.is_external:
        raise InvalidState("Lifecycle actions are unavailable on adopted agents.")


def _require_container(agent: Agent) -> None:
    if agent.status in IN_FLIGHT:
        raise InvalidState(f"The agent is still being deployed ({agent.status}).")
    if not agent.container_id:
        raise NoContainer()


@transaction.atomic
def agent_start(*, agent: Agent) -> Agent:
    agent = agent_lock(agent.pk)
    _refuse_external(agent)
    if not agent.container_id:
        raise NoContainer()
    _require_container(agent)
    engine_call(agent, lambda backend: backend.start(agent))
    agent.status, agent.paused_reason, agent.last_error = Status.RUNNING, None, ""
    agent.save(update_fields=["status", "paused_reason", "last_error", "updated_at"])
    agent_event(agent, "agent.started", f"Agent {agent.name} was started.")
    return agent


def _abort_runs(agent: Agent) -> None:
    """Abort the runtime's active runs first: an OpenClaw busy with a run ignores TERM and drains
    for up to five minutes. The engine's kill timeout stays the backstop, so any failure here
    (a runtime that cannot abort, does not answer, or is not serving) only gets logged."""
    if agent.status not in SERVING:
        return
    try:
        aborted = gateway_for(agent).abort_runs()
    except GatewayUnsupported:
        return
    except FleetError as exc:
        logger.info("Could not abort the runs of agent %s before stopping it: %s", agent.pk, exc.message)
        return
    if aborted:
        logger.info("Aborted %d run(s) of agent %s before stopping it", len(aborted), agent.pk)


@transaction.atomic
def agent_stop(*, agent: Agent, paused_reason: str | None = None) -> Agent:
    """Stop from any state. A deploy still in flight finds the row `stopped` and leaves its
    workload stopped (agents.services.provisioning)."""
    agent = agent_lock(agent.pk)
    _refuse_external(agent)
    if agent.container_id:
        _abort_runs(agent)
        engine_call(agent, lambda backend: backend.stop(agent), missing_ok=True)
    # A stopped agent has no current error: a "Retrying: ..." of a deploy it ended, or a
    # warning's reason, would be stale.
    agent.status, agent.last_error = Status.STOPPED, ""
    fields = ["status", "last_error", "updated_at"]
    if paused_reason is not None:
        agent.paused_reason = paused_reason
        fields.append("paused_reason")
    agent.save(update_fields=fields)
    agent_event(agent, "agent.stopped", f"Agent {agent.name} was stopped.", paused_reason=paused_reason)
    return agent


@transaction.atomic
def agent_restart(*, agent: Agent) -> None:
    agent = agent_lock(agent.pk)
    _refuse_external(agent)
    _require_container(agent)
    engine_call(agent, lambda backend: backend.restart(agent))
    agent.status, agent.paused_reason, agent.last_error = Status.RUNNING, None, ""
    agent.save(update_fields=["status", "paused_reason", "last_error", "updated_at"])
    agent_event(agent, "agent.restarted", f"Agent {agent.name} was restarted.")


@publishes_after_commit
@transaction.atomic
def agent_redeploy(*, agent: Agent) -> Agent:
    """Only from warning/error/stopped: remove the old workload (keeping its state for the new
    one), clear the reference, queue anew."""
    agent = agent_lock(agent.pk)
    _refuse_external(agent)
    if agent.status not in REDEPLOYABLE:
        raise InvalidState(f"Only a warning, error or stopped agent can be redeployed (it is {agent.status}).")
    if agent.container_id:
        engine_call(agent, lambda backend: backend.remove(agent, keep_state=True), missing_ok=True)
    agent.status = Status.QUEUED
    agent.container_id = agent.container_name = agent.node = agent.last_error = ""
    agent.gateway_host_port = None
    agent.paused_reason = None
    agent.save()
    agent_event(agent, "agent.redeployed", f"Agent {agent.name} was queued for redeployment.")
    provisioning_enqueue(agent)
    return agent


@transaction.atomic
def agent_delete(*, agent: Agent) -> None:
    """Destroy the workload, then the row (and with it assignments and agent data).
    An adopted agent is only deregistered; a job still in flight removes what it created."""
    agent = agent_lock(agent.pk)
    if not agent.is_external and agent.container_id:
        engine_call(agent, lambda backend: backend.remove(agent), missing_ok=True)
    elif not agent.is_external and agent.status == Status.ERROR:
        _remove_leftover_state(agent)
    workspace_ids = agent_workspace_ids(agent.pk)
    agent_event(agent, "agent.deleted", f"Agent {agent.name} was deleted.", workspace_ids=workspace_ids)
    agent.delete()


def agents_holding(user) -> UserHoldings:
    """accounts.deletion holder: a user who owns agents is not deleted before them, since only
    agent_delete removes their workloads (registered by AgentsConfig.ready)."""
    agents = list(Agent.objects.filter(owner_id=user.pk).order_by("name", "id"))
    if not agents:
        return UserHoldings()
    return UserHoldings(blockers=(f"their agents {named(agents)}",), held=tuple(agents))


def _remove_leftover_state(agent: Agent) -> None:
    """A redeploy that failed before its container existed leaves the state the redeploy kept.
    Best effort: an unreachable engine must not keep an errored agent from being deleted."""
    try:
        backend_of(agent).remove(agent)
    except BackendError as exc:
        logger.warning("Could not remove the leftover state of agent %s: %s", agent.pk, exc)


def agent_reconcile(*, agent: Agent) -> Agent:
    """GET /agents/:id: a running/warning agent whose workload is gone or stopped becomes
    `stopped` before the answer. An unreachable engine leaves the stored state as it is."""
    if agent.is_external or not agent.container_id or agent.status not in SERVING:
        return agent
    try:
        live = backend_of(agent).inspect(agent)
    except BackendError as exc:
        logger.warning("Cannot inspect agent %s: %s", agent.pk, exc)
        return agent
    node_record(agent, live.node)
    if live.exists and live.running:
        return agent
    observed = agent.status
    what = "no longer exists" if not live.exists else f"is {live.status}"
    reason = f"The container {what}" + (f" (exit code {live.exit_code})." if live.exit_code else ".")
    changed = status_swap(agent.pk, observed=observed, new=Status.STOPPED, last_error=reason)
    agent.refresh_from_db()
    if changed:
        agent_event(agent, "agent.stopped", f"Agent {agent.name} was found stopped: its container {what}.",
                    exit_code=live.exit_code)
    return agent


@dataclass(frozen=True)
class GatewayUrl:
    url: str
    port: int


def agent_gateway_url(*, agent: Agent, secure: bool) -> GatewayUrl:
    """GET /agents/:id/gateway-url: where the agent's UI answers, its own origin on the gateway
    proxy (agents.proxy: a browser signs in there through POST .../gateway/session), and the
    runtime's host port, resolved from the engine."""
    url = f"{proxy_origin(agent.pk, secure=secure)}/"
    if agent.is_external:
        return GatewayUrl(url=url, port=agent.gateway_host_port)
    if agent.status != Status.RUNNING:
        raise Conflict(f"The agent is not running (it is {agent.status}).")
    if not agent.container_id:
        raise NoContainerToInspect()
    live = engine_call(agent, lambda backend: backend.inspect(agent), reading=True)
    if not live.exists:
        raise NoContainerToInspect(CONTAINER_GONE)
    port = live.host_port or agent.gateway_host_port
    if not port:
        raise DaemonUnreachable("The container's gateway port could not be resolved.")
    return GatewayUrl(url=url, port=port)
