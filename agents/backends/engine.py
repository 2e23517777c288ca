"""The one door to the runtime backends, and the one mapping of their failures.

Everything that acts on a workload (lifecycle, provisioning, monitoring, stats, the gateway's
endpoint lookup) gets its backend from `backend_of` and, when a caller waits for the answer,
calls it through `engine_call`, so one fault gives one answer wherever it happens:

- no backend serves the agent's target any more, or the engine fails: 502 daemon_unreachable;
- the workload is gone: None with `missing_ok`, else no_container (400 for an action that
  needs one, 409 for a read of it: `reading=True`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from fleet.errors import DaemonUnreachable, FleetError, NoContainer, NoContainerToInspect

from ..models import Agent
from .base import BackendError, BackendUnreachable, ExecResult, RuntimeBackend, WorkloadMissing
from .registry import UnknownTarget, backend_for

T = TypeVar("T")

CONTAINER_GONE = "The agent's container no longer exists; redeploy it."


class NoBackend(BackendError):
    """No registered backend serves the agent's execution target (a target unregistered since)."""


def backend_of(agent: Agent) -> RuntimeBackend:
    """The agent's backend; NoBackend (a BackendError) when its target is not registered."""
    try:
        return backend_for(agent)
    except UnknownTarget as exc:
        raise NoBackend(str(exc)) from exc


def engine_call(agent: Agent, operation: Callable[[RuntimeBackend], T], *, missing_ok: bool = False,
                reading: bool = False, backend: RuntimeBackend | None = None) -> T | None:
    """Run `operation(backend)` and turn backend failures into the domain errors above.
    `backend`: the agent's, resolved already (a sweep resolves each engine's once)."""
    try:
        return operation(backend if backend is not None else backend_of(agent))
    except WorkloadMissing:
        if missing_ok:
            return None
        raise engine_error(WorkloadMissing(), reading=reading) from None
    except BackendError as exc:
        raise engine_error(exc, reading=reading) from None


def engine_error(exc: BackendError, *, reading: bool = False) -> FleetError:
    """The answer to a backend failure, for a caller that awaits its backend itself (a terminal)."""
    if isinstance(exc, WorkloadMissing):
        return (NoContainerToInspect if reading else NoContainer)(CONTAINER_GONE)
    if isinstance(exc, NoBackend):
        return DaemonUnreachable("No container engine serves this agent's target any more.")
    if isinstance(exc, BackendUnreachable):
        return DaemonUnreachable("The container engine could not be reached.")
    return DaemonUnreachable(f"The container engine refused the operation: {exc}")


def workload_exec(agent: Agent, argv: Sequence[str], *, timeout: float, max_output: int,
                  stop_when: Callable[[bytes], bool] | None = None) -> ExecResult:
    """Run a fixed argv inside the agent's workload (RuntimeBackend.exec) through the door
    above. Callers own which commands may run: this runs whatever argv it is given."""
    return engine_call(agent, lambda backend: backend.exec(agent, list(argv), timeout=timeout,
                                                           max_output=max_output, stop_when=stop_when))
