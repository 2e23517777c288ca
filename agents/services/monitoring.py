"""The monitoring sweep (beat, every 30 s): reconcile running/warning agents with their workload.

- exited cleanly or gone -> stopped; crash loop or non-zero exit -> error;
- running but the gateway does not answer /health -> warning; healthy again -> running.
Adopted agents are judged by their gateway's health alone. queued/deploying belong to the
provisioning job and are never touched. Engine calls run concurrently in a small thread pool
(no database work in the threads); each write is a compare-and-swap on the observed status,
so a stop or start that lands meanwhile wins. One agent's failure never stops the sweep.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..backends.base import BackendError
from ..events import agent_event
from ..gateway import gateway_health
from ..models import Agent, Status
from .engine import backend_of
from .transitions import status_swap

logger = logging.getLogger(__name__)

MONITORED = (Status.RUNNING, Status.WARNING)
ENGINE_THREADS = 8


@dataclass(frozen=True)
class Verdict:
    status: str
    reason: str = ""


def _observe(agent: Agent) -> Verdict | None:
    """What the agent's status should be now, or None when it cannot be told (engine down)."""
    if agent.is_external:
        healthy = gateway_health(agent)
        return Verdict(Status.RUNNING) if healthy else Verdict(Status.WARNING, "The gateway does not answer /health.")
    try:
        live = backend_of(agent).inspect(agent)
    except BackendError as exc:
        logger.warning("Monitoring cannot inspect agent %s: %s", agent.pk, exc)
        return None
    if not live.exists:
        return Verdict(Status.STOPPED, "The container no longer exists.")
    if live.crash_looping:
        return Verdict(Status.ERROR, f"The container is crash-looping ({live.restart_count} restarts).")
    if not live.running:
        if live.exit_code:
            return Verdict(Status.ERROR, f"The container exited with code {live.exit_code}.")
        return Verdict(Status.STOPPED, "The container exited.")
    if not gateway_health(agent):
        return Verdict(Status.WARNING, "The container runs but its gateway does not answer /health.")
    return Verdict(Status.RUNNING)


def _observe_safely(agent: Agent) -> Verdict | None:
    try:
        return _observe(agent)
    except Exception:  # one agent must never stop the sweep
        logger.exception("Monitoring failed for agent %s", agent.pk)
        return None


_EVENT_OF = {Status.RUNNING: "agent.running", Status.WARNING: "agent.warning",
             Status.ERROR: "agent.error", Status.STOPPED: "agent.stopped"}


def _apply(agent: Agent, verdict: Verdict) -> bool:
    if verdict.status == agent.status:
        return False
    fields = {"last_error": verdict.reason} if verdict.status == Status.ERROR else {}
    if not status_swap(agent.pk, observed=agent.status, new=verdict.status, **fields):
        return False
    previous, agent.status = agent.status, verdict.status
    message = verdict.reason or f"Agent {agent.name} is healthy again."
    agent_event(agent, _EVENT_OF[verdict.status], message, previous_status=previous, reason=verdict.reason)
    return True


def agents_monitor() -> dict[str, int]:
    """One sweep; returns counts (checked, changed, unknown) for logs and tests."""
    agents = list(Agent.objects.filter(status__in=MONITORED).exclude(container_id="", is_external=False))
    with ThreadPoolExecutor(max_workers=ENGINE_THREADS) as pool:
        verdicts = list(pool.map(_observe_safely, agents))
    changed = unknown = 0
    for agent, verdict in zip(agents, verdicts):
        if verdict is None:
            unknown += 1
            continue
        try:
            changed += _apply(agent, verdict)
        except Exception:
            logger.exception("Monitoring could not record the state of agent %s", agent.pk)
    return {"checked": len(agents), "changed": changed, "unknown": unknown}
