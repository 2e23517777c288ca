"""Engine probing (beat, every 30 s): is each engine and registered target reachable?

Every execution target id of `registry.probe_targets()` is probed through its backend's
`probe()`, concurrently. The result is kept in `EngineHealth` (one row per target, read by
/api/health); a change of state emits `engine.unreachable` or `engine.recovered` (data:
`target_id`, `reason`) once, under the row's lock, so overlapping probes never emit twice.
The events go to the workspaces of the agents placed on that target (alert rules are per
workspace). Agents follow their engine, by state rather than by transition, so a probe that
died halfway is completed by the next one:

- engine unreachable: its `running` agents become `warning` and its `warning` ones get the
  reason (`last_error`: "Its engine (<id>) cannot be reached: ..."), event `agent.warning`;
- engine reachable: its `warning` agents that carry that reason go back to `running`
  (`agent.running`); the monitoring sweep then judges them as usual.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from fleet.events import emit

from ..backends.registry import backend_for_target, probe_targets
from ..events import agent_event
from ..models import Agent, EngineHealth, EngineState, Status, WorkspaceAgent
from .transitions import status_swap

logger = logging.getLogger(__name__)

PROBE_EVERY_SECONDS = 30
PROBE_THREADS = 8
# A result older than this says nothing any more (beat or the worker stopped): "unknown".
RESULT_STALE_SECONDS = 3 * PROBE_EVERY_SECONDS + 5
UNKNOWN = "unknown"


@dataclass(frozen=True)
class ProbeResult:
    target_id: str
    state: str  # EngineState
    reason: str  # the engine's version words, or why it cannot be reached


def engine_probe(target_id: str) -> ProbeResult:
    """Probe one target; never raises (a failing probe is an unreachable target)."""
    try:
        return ProbeResult(target_id, EngineState.OK, backend_for_target(target_id).probe())
    except Exception as exc:  # BackendError above all; anything else is as unreachable for its agents
        return ProbeResult(target_id, EngineState.UNREACHABLE, str(exc) or type(exc).__name__)


def engine_reason_prefix(target_id: str) -> str:
    return f"Its engine ({target_id}) cannot be reached"


def _engine_workspace_ids(target_id: str) -> list:
    rows = WorkspaceAgent.objects.filter(agent__execution_target_id=target_id, agent__is_external=False)
    return sorted({str(w) for w in rows.values_list("workspace_id", flat=True)})


@transaction.atomic
def engine_health_record(result: ProbeResult) -> str | None:
    """Store a probe's result; the event kind emitted when the state changed, else None.
    A first result emits only when it is a failure (there was nothing to recover from)."""
    now = timezone.now()
    row = EngineHealth.objects.select_for_update().filter(pk=result.target_id).first()
    previous = row.state if row else None
    if row is None:
        row, created = EngineHealth.objects.get_or_create(
            pk=result.target_id,
            defaults={"state": result.state, "reason": result.reason, "checked_at": now, "changed_at": now},
        )
        if not created:  # a concurrent probe created it first: judge against its result
            row = EngineHealth.objects.select_for_update().get(pk=result.target_id)
            previous = row.state
    changed = previous is not None and previous != result.state
    if previous is not None:
        row.state, row.reason, row.checked_at = result.state, result.reason, now
        if changed:
            row.changed_at = now
        row.save()
    if changed and result.state == EngineState.OK:
        kind, message = "engine.recovered", f"The engine {result.target_id} can be reached again."
    elif (changed or previous is None) and result.state == EngineState.UNREACHABLE:
        kind, message = "engine.unreachable", f"The engine {result.target_id} cannot be reached: {result.reason}"
    else:
        return None
    emit(kind, message=message, workspace_ids=_engine_workspace_ids(result.target_id),
         data={"target_id": result.target_id, "reason": result.reason})
    (logger.warning if kind == "engine.unreachable" else logger.info)("%s", message)
    return kind


def _agents_on(target_id: str, statuses):
    return Agent.objects.filter(execution_target_id=target_id, is_external=False, status__in=statuses)


def engine_agents_follow(result: ProbeResult) -> int:
    """Move the target's agents to match its state; returns how many changed status."""
    prefix = engine_reason_prefix(result.target_id)
    changed = 0
    if result.state == EngineState.UNREACHABLE:
        reason = f"{prefix}: {result.reason}"[:2000]
        # Warning agents take the engine's reason, which is now the current one.
        _agents_on(result.target_id, [Status.WARNING]).exclude(last_error=reason).update(
            last_error=reason, updated_at=timezone.now()
        )
        for agent in _agents_on(result.target_id, [Status.RUNNING]):
            if status_swap(agent.pk, observed=Status.RUNNING, new=Status.WARNING, last_error=reason):
                agent.status, agent.last_error = Status.WARNING, reason
                agent_event(agent, "agent.warning", f"Agent {agent.name}: {reason}",
                            previous_status=Status.RUNNING, reason=reason, target_id=result.target_id)
                changed += 1
        return changed
    for agent in _agents_on(result.target_id, [Status.WARNING]).filter(last_error__startswith=prefix):
        if status_swap(agent.pk, observed=Status.WARNING, new=Status.RUNNING, last_error="", readiness_failures=0):
            agent.status, agent.last_error = Status.RUNNING, ""
            agent_event(agent, "agent.running", f"Agent {agent.name}: its engine can be reached again.",
                        previous_status=Status.WARNING, reason="", target_id=result.target_id)
            changed += 1
    return changed


def engines_probe() -> dict[str, str]:
    """One probe of every target; returns {target_id: state} for logs and tests."""
    targets = probe_targets()
    if not targets:
        return {}
    with ThreadPoolExecutor(max_workers=min(PROBE_THREADS, len(targets))) as pool:
        results = list(pool.map(engine_probe, targets))
    for result in results:
        try:
            engine_health_record(result)
            engine_agents_follow(result)
        except Exception:  # one target must never stop the others
            logger.exception("Could not record the probe of engine %s", result.target_id)
    return {result.target_id: result.state for result in results}


def engines_health() -> list[ProbeResult]:
    """Each probed target with what its last probe found (state "unknown" when it was never
    probed or the result is stale). Reads only the stored results: a dead host never slows
    the caller (/api/health, the console's dashboard)."""
    targets = probe_targets()
    fresh_after = timezone.now() - timedelta(seconds=RESULT_STALE_SECONDS)
    rows = {row.target_id: row for row in EngineHealth.objects.filter(pk__in=targets)}
    results = []
    for target_id in targets:
        row = rows.get(target_id)
        if row is None or row.checked_at < fresh_after:
            results.append(ProbeResult(target_id, UNKNOWN, "Not probed recently (is the beat scheduler running?)."))
        else:
            results.append(ProbeResult(target_id, row.state, row.reason))
    return results


def engines_report() -> dict[str, str]:
    """/api/health's `checks.engines`: each target's last state."""
    return {result.target_id: result.state for result in engines_health()}
