"""The monitoring sweep (beat, every 30 s): reconcile running/warning agents with their runtime.

- exited cleanly or gone -> stopped; crash loop or non-zero exit -> error;
- the workload runs but the runtime is not ready (OpenClaw /readyz 503 or no answer; Hermes's
  gateway not running) at two checks in a row -> warning, with the reason in `last_error`;
  ready again -> running.
- a workload the engine restarted by itself (its restart policy; a pod's container) since the
  last sweep -> `agent.warning` with the reason (an OOM kill says so), once per new restart, its
  `restart_count` and `oom_killed` stored on the agent; the status stays what the checks say.
Adopted agents are judged by their runtime's readiness alone. queued/deploying belong to the
provisioning job and are never touched. A runtime not shaken hands with yet is, once it runs
(agents.services.handshake). Engine and gateway calls run concurrently in a small thread pool
(no database work in the threads); each write is a compare-and-swap on the observed status, so
a stop or start that lands meanwhile wins. One agent's failure never stops the sweep.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from django.db.models import F

from ..backends.base import BackendError
from ..backends.engine import backend_of
from ..events import agent_event
from ..gateway import gateway_readiness
from ..models import SERVING, Agent, Status
from .handshake import agent_handshake
from .transitions import node_record, status_swap

logger = logging.getLogger(__name__)

ENGINE_THREADS = 8
FAILED_CHECKS_FOR_WARNING = 2  # one slow answer is not yet a warning


@dataclass(frozen=True)
class Restarts:
    count: int
    oom_killed: bool

    def reason(self) -> str:
        cause = "it was killed for lack of memory (OOM)" if self.oom_killed else "its process ended"
        times = "1 restart" if self.count == 1 else f"{self.count} restarts"
        return f"The engine restarted the runtime: {cause} ({times} so far)."


@dataclass(frozen=True)
class Verdict:
    status: str
    reason: str = ""
    not_ready: bool = False  # the runtime failed a readiness check (counts toward a warning)
    node: str | None = None  # where the engine says the workload runs now
    restarts: Restarts | None = None  # what the engine says of its own restarts (None: not asked)


def _readiness_verdict(agent: Agent) -> Verdict:
    readiness = gateway_readiness(agent)
    if readiness.ready:
        return Verdict(Status.RUNNING)
    detail = "; ".join(readiness.failing) or "it reports not ready"
    return Verdict(Status.WARNING, f"The runtime is not ready: {detail}", not_ready=True)


def _observe(agent: Agent) -> Verdict | None:
    """What the agent's status should be now, or None when it cannot be told (engine down)."""
    if agent.is_external:
        return _readiness_verdict(agent)
    try:
        live = backend_of(agent).inspect(agent)
    except BackendError as exc:
        logger.warning("Monitoring cannot inspect agent %s: %s", agent.pk, exc)
        return None
    if not live.exists:
        return Verdict(Status.STOPPED, "The container no longer exists.")
    restarts = Restarts(count=live.restart_count, oom_killed=live.oom_killed)
    oom = ", killed for lack of memory (OOM)" if live.oom_killed else ""
    if live.restarting_after_an_end:
        # The engine is restarting it after an end (an OOM kill): not a loop yet. The restart
        # is reported (_restarts_record); the next sweep sees it running again, or looping.
        return Verdict(agent.status, node=live.node, restarts=restarts)
    if live.crash_looping:
        return Verdict(Status.ERROR, f"The container is crash-looping{oom} ({live.restart_count} restarts).",
                       node=live.node, restarts=restarts)
    if not live.running:
        if live.exit_code:
            reason = f"The container exited with code {live.exit_code}{oom}."
            return Verdict(Status.ERROR, reason, node=live.node, restarts=restarts)
        return Verdict(Status.STOPPED, "The container exited.", node=live.node, restarts=restarts)
    return replace(_readiness_verdict(agent), node=live.node, restarts=restarts)


def _observe_safely(agent: Agent) -> Verdict | None:
    try:
        return _observe(agent)
    except Exception:  # one agent must never stop the sweep
        logger.exception("Monitoring failed for agent %s", agent.pk)
        return None


_EVENT_OF = {Status.RUNNING: "agent.running", Status.WARNING: "agent.warning",
             Status.ERROR: "agent.error", Status.STOPPED: "agent.stopped"}


def _count_failed_check(agent: Agent, verdict: Verdict) -> Verdict | None:
    """A failed readiness check: counted; a warning only from the second one in a row."""
    Agent.objects.filter(pk=agent.pk).update(readiness_failures=F("readiness_failures") + 1)
    failures = agent.readiness_failures + 1
    if failures < FAILED_CHECKS_FOR_WARNING and agent.status == Status.RUNNING:
        return None
    return verdict


def _apply(agent: Agent, verdict: Verdict) -> bool:
    if verdict.not_ready:
        verdict = _count_failed_check(agent, verdict)
        if verdict is None:
            return False
    elif agent.readiness_failures:
        Agent.objects.filter(pk=agent.pk).update(readiness_failures=0)
    if verdict.status == agent.status:
        if verdict.reason and verdict.reason != agent.last_error:  # the reason changed while warning
            Agent.objects.filter(pk=agent.pk, status=agent.status).update(last_error=verdict.reason[:2000])
        return False
    fields = {"last_error": verdict.reason[:2000]}
    if verdict.status == Status.RUNNING:
        fields["readiness_failures"] = 0
    if not status_swap(agent.pk, observed=agent.status, new=verdict.status, **fields):
        return False
    previous, agent.status = agent.status, verdict.status
    message = verdict.reason or f"Agent {agent.name} is healthy again."
    agent_event(agent, _EVENT_OF[verdict.status], message, previous_status=previous, reason=verdict.reason)
    return True


def _restarts_record(agent: Agent, restarts: Restarts | None) -> bool:
    """Store what the engine says of its restarts of the workload (only for the same workload,
    as node_record); a count above the stored one is a new restart: `agent.warning` with the
    reason, once, and the reason in `last_error` while the agent still runs. A lower count is a
    new workload (a redeploy) and is only stored. True when a restart was reported."""
    if restarts is None or (restarts.count, restarts.oom_killed) == (agent.restart_count, agent.oom_killed):
        return False
    new = restarts.count > agent.restart_count
    stored = Agent.objects.filter(pk=agent.pk, container_id=agent.container_id, restart_count=agent.restart_count)
    if not stored.update(restart_count=restarts.count, oom_killed=restarts.oom_killed):
        return False  # a redeploy, or another sweep that recorded it first
    agent.restart_count, agent.oom_killed = restarts.count, restarts.oom_killed
    if not new or agent.status not in SERVING:  # stopped or in error: that change said why
        return False
    reason = restarts.reason()
    if agent.status == Status.RUNNING:
        Agent.objects.filter(pk=agent.pk, status=agent.status).update(last_error=reason[:2000])
        agent.last_error = reason[:2000]
    agent_event(agent, "agent.warning", reason, reason=reason, previous_status=agent.status,
                restart_count=restarts.count, oom_killed=restarts.oom_killed)
    return True


def agents_monitor() -> dict[str, int]:
    """One sweep; returns counts (checked, changed, unknown) for logs and tests."""
    agents = list(Agent.objects.filter(status__in=SERVING).exclude(container_id="", is_external=False))
    with ThreadPoolExecutor(max_workers=ENGINE_THREADS) as pool:
        verdicts = list(pool.map(_observe_safely, agents))
    changed = unknown = 0
    for agent, verdict in zip(agents, verdicts, strict=True):
        if verdict is None:
            unknown += 1
            continue
        try:
            node_record(agent, verdict.node)  # a pod rescheduled onto another node
            changed += _apply(agent, verdict)
            _restarts_record(agent, verdict.restarts)
            if agent.last_handshake_at is None and agent.status == Status.RUNNING:
                agent_handshake(agent=agent)
        except Exception:
            logger.exception("Monitoring could not record the state of agent %s", agent.pk)
    return {"checked": len(agents), "changed": changed, "unknown": unknown}
