"""What the monitoring sweep concludes of one agent from what its engine and its runtime say
(agents.services.monitoring has the rules in words), and one agent observed with blocking calls,
for the engines and adopted runtimes that are not read on the event loop
(agents.services.monitoring_engines). Nothing here touches the database."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from ..backends.base import BackendError, LiveState, RuntimeBackend
from ..gateway import Readiness, gateway_readiness
from ..models import Agent, Status

logger = logging.getLogger(__name__)


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


def readiness_verdict(readiness: Readiness) -> Verdict:
    if readiness.ready:
        return Verdict(Status.RUNNING)
    detail = "; ".join(readiness.failing) or "it reports not ready"
    return Verdict(Status.WARNING, f"The runtime is not ready: {detail}", not_ready=True)


def live_verdict(agent: Agent, live: LiveState) -> Verdict | None:
    """The verdict the engine's answer gives by itself; None when the workload runs, so the
    runtime's readiness decides (then `with_live` adds what the engine said)."""
    if not live.exists:
        return Verdict(Status.STOPPED, "The container no longer exists.")
    restarts = Restarts(count=live.restart_count, oom_killed=live.oom_killed)
    oom = ", killed for lack of memory (OOM)" if live.oom_killed else ""
    if live.restarting_after_an_end:
        # The engine is restarting it after an end (an OOM kill): not a loop yet. The restart
        # is reported (monitoring._restarts_record); the next sweep sees it running again, or looping.
        return Verdict(agent.status, node=live.node, restarts=restarts)
    if live.crash_looping:
        return Verdict(Status.ERROR, f"The container is crash-looping{oom} ({live.restart_count} restarts).",
                       node=live.node, restarts=restarts)
    if not live.running:
        if live.exit_code:
            reason = f"The container exited with code {live.exit_code}{oom}."
            return Verdict(Status.ERROR, reason, node=live.node, restarts=restarts)
        return Verdict(Status.STOPPED, "The container exited.", node=live.node, restarts=restarts)
    return None


def with_live(verdict: Verdict, live: LiveState) -> Verdict:
    return replace(verdict, node=live.node, restarts=Restarts(count=live.restart_count, oom_killed=live.oom_killed))


def inspect_failed(agent: Agent, error: BaseException) -> None:
    logger.warning("Monitoring cannot inspect agent %s: %s", agent.pk, error)


def observe(agent: Agent, backend: RuntimeBackend | None) -> Verdict | None:
    """What the agent's status should be now, or None when it cannot be told (engine down, no
    backend: `backend` None), with blocking calls. Adopted agents: their readiness alone."""
    if agent.is_external:
        return readiness_verdict(gateway_readiness(agent))
    if backend is None:
        return None
    try:
        live = backend.inspect(agent)
    except BackendError as exc:
        inspect_failed(agent, exc)
        return None
    verdict = live_verdict(agent, live)
    if verdict is not None:
        return verdict
    return with_live(readiness_verdict(gateway_readiness(agent, backend=backend)), live)


def observe_safely(agent: Agent, backend: RuntimeBackend | None) -> Verdict | None:
    try:
        return observe(agent, backend)
    except Exception:  # one agent must never stop the sweep
        logger.exception("Monitoring failed for agent %s", agent.pk)
        return None
