"""Reads of agent stats. The caller resolves the agent (and access) with agents.selectors.agent_for."""

from __future__ import annotations

from dataclasses import asdict

from agents.backends.base import BackendError, BackendUnreachable, WorkloadMissing
from agents.models import Agent
from agents.models.stats import RECORD_FIELDS
from fleet.api.errors import DaemonUnreachable, NoContainer

from .history import history_records
from .window import Window

# The spec's "Stats snapshot": the history record's fields plus two live-only ones.
SNAPSHOT_FIELDS = RECORD_FIELDS + ("uptime_seconds", "running")


def stats_snapshot_get(*, agent: Agent) -> dict:
    """One live snapshot read from the agent's engine: the spec's "Stats snapshot" fields.

    409 no_container when the agent has no container (or its engine no longer knows it),
    502 daemon_unreachable when the engine cannot be reached or fails to answer.
    """
    if not agent.container_id:
        raise NoContainer("The agent has no container; deploy or redeploy it first.", status_code=409)
    from agents.backends.registry import backend_for

    try:
        snapshot = backend_for(agent).stats(agent)
    except WorkloadMissing:
        raise NoContainer("The agent's container no longer exists; redeploy it.", status_code=409) from None
    except BackendUnreachable as error:
        raise DaemonUnreachable(f"The container daemon could not be reached: {error}") from None
    except BackendError as error:
        raise DaemonUnreachable(f"The container daemon could not report stats: {error}") from None
    values = asdict(snapshot)
    return {name: values[name] for name in SNAPSHOT_FIELDS}


def stats_history_list(*, agent: Agent, window: Window) -> list[dict]:
    """The spec's "Stats history record"s of the agent in the window, oldest first."""
    return history_records(agent_id=agent.pk, window=window)
