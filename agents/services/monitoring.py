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
(agents.services.handshake). Engine and gateway calls run concurrently, engine by engine, on
the event loop where the engine allows it and in a few threads where it does not, within a budget
(agents.services.monitoring_engines; no database work but each engine's backend, once); the
readiness counters are then written for all agents at once, and each status change is a
compare-and-swap on the observed status, so a stop or start that lands meanwhile wins. One agent's
failure, or one engine's, never stops the sweep.
"""

from __future__ import annotations

import logging

from django.db.models import F

from ..events import agent_event
from ..models import SERVING, Agent, Status
from .handshake import agent_handshake
from .monitoring_engines import agents_observe
from .monitoring_verdicts import Restarts, Verdict
from .transitions import node_record, status_swap

logger = logging.getLogger(__name__)

FAILED_CHECKS_FOR_WARNING = 2  # one slow answer is not yet a warning


_EVENT_OF = {Status.RUNNING: "agent.running", Status.WARNING: "agent.warning",
             Status.ERROR: "agent.error", Status.STOPPED: "agent.stopped"}


def _readiness_checks_record(observed: list[tuple[Agent, Verdict]]) -> None:
    """Count each failed readiness check and forget the count at any other verdict: two
    updates for the whole sweep, whatever the number of agents."""
    failed = [agent.pk for agent, verdict in observed if verdict.not_ready]
    passed = [agent.pk for agent, verdict in observed if not verdict.not_ready and agent.readiness_failures]
    if failed:
        Agent.objects.filter(pk__in=failed).update(readiness_failures=F("readiness_failures") + 1)
    if passed:
        Agent.objects.filter(pk__in=passed).update(readiness_failures=0)


def _apply(agent: Agent, verdict: Verdict) -> bool:
    """Act on the verdict (the readiness counters are written already: _readiness_checks_record)."""
    if verdict.not_ready and agent.readiness_failures + 1 < FAILED_CHECKS_FOR_WARNING \
            and agent.status == Status.RUNNING:
        return False  # a warning only from the second failed check in a row
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
    verdicts = agents_observe(agents)
    observed = [(agent, verdicts[agent.pk]) for agent in agents if verdicts[agent.pk] is not None]
    try:
        _readiness_checks_record(observed)
    except Exception:
        logger.exception("Monitoring could not record the readiness checks")
    changed = 0
    for agent, verdict in observed:
        try:
            node_record(agent, verdict.node)  # a pod rescheduled onto another node
            changed += _apply(agent, verdict)
            _restarts_record(agent, verdict.restarts)
            if agent.last_handshake_at is None and agent.status == Status.RUNNING:
                agent_handshake(agent=agent)
        except Exception:
            logger.exception("Monitoring could not record the state of agent %s", agent.pk)
    return {"checked": len(agents), "changed": changed, "unknown": len(agents) - len(observed)}
