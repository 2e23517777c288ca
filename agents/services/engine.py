"""Calling a runtime backend from a request: engine failures become the API's errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from fleet.api.errors import DaemonUnreachable, NoContainer

from ..backends.base import BackendError, BackendUnreachable, RuntimeBackend, WorkloadMissing
from ..models import Agent

T = TypeVar("T")


class NoBackend(BackendError):
    """No registered backend serves the agent's execution target (a target unregistered since)."""


def backend_of(agent: Agent) -> RuntimeBackend:
    from ..backends.registry import UnknownTarget, backend_for  # load the registry late

    try:
        return backend_for(agent)
    except UnknownTarget as exc:
        raise NoBackend(str(exc)) from exc


def engine_call(agent: Agent, operation: Callable[[RuntimeBackend], T], *, missing_ok: bool = False,
                no_container_status: int = 400) -> T | None:
    """Run `operation(backend)`: unreachable or failing engine -> 502 daemon_unreachable;
    a missing workload -> None when `missing_ok`, else no_container (redeploy first)."""
    try:
        return operation(backend_of(agent))
    except WorkloadMissing:
        if missing_ok:
            return None
        raise NoContainer("The agent's container no longer exists; redeploy it.", status_code=no_container_status)
    except BackendUnreachable as exc:
        raise DaemonUnreachable(f"The container engine could not be reached: {exc}") from None
    except BackendError as exc:
        raise DaemonUnreachable(f"The container engine refused the operation: {exc}") from None
