"""Reading an agent's workload output through its backend (WorkloadLogs), by engine's door."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime

from fleet.errors import NoContainerToInspect

from ..backends.base import LogLine, WorkloadLogs
from ..backends.engine import engine_call
from ..backends.registry import is_registered
from ..models import Agent
from .errors import LogsUnsupported


def _logs_call(agent: Agent, read):
    """`read(backend)` on the agent's WorkloadLogs, through the engine's door."""
    if agent.is_external or not agent.container_id:
        # Adopted runtimes have no workload of ours; a queued one has none yet.
        raise NoContainerToInspect("The agent has no workload whose output could be read.")
    if not is_registered(agent.execution_target_id):
        raise LogsUnsupported()

    def call(backend):
        if not isinstance(backend, WorkloadLogs):
            raise LogsUnsupported()
        return read(backend)

    return engine_call(agent, call, reading=True)


def agent_logs_list(*, agent: Agent, tail: int, since: datetime | None) -> list[LogLine]:
    """The last `tail` lines written at or after `since`, oldest first (an engine may send
    one stream's lines before the other's: they are put in time order)."""
    lines = _logs_call(agent, lambda backend: backend.logs(agent, tail=tail, since=since))
    try:
        return sorted(lines, key=lambda line: line.ts)
    finally:
        _close(lines)


def agent_logs_follow(*, agent: Agent, tail: int, since: datetime | None) -> AsyncIterator[LogLine]:
    """The last `tail` lines, then new ones as they come, read on the event loop until the
    caller stops. The engine is asked now, so its refusals (no container, unreachable) are
    still an answer."""
    return _logs_call(agent, lambda backend: backend.follow_logs(agent, tail=tail, since=since))


def _close(lines) -> None:
    close = getattr(lines, "close", None)
    if close is not None:
        close()
