"""Reads of agent stats. The view resolves the agent and the caller's access (agents.permissions.AgentReader)."""

from __future__ import annotations

from agents.backends.base import StatsSnapshot
from agents.backends.engine import engine_call
from agents.models import Agent
from fleet.errors import NoContainerToInspect

from .history import history_records
from .window import Window


def stats_snapshot_get(*, agent: Agent) -> StatsSnapshot:
    """One live snapshot read from the agent's engine (shown by agents.stats.serializers).

    409 no_container when the agent has no container (or its engine no longer knows it),
    502 daemon_unreachable when the engine cannot be reached or fails to answer.
    """
    if not agent.container_id:
        raise NoContainerToInspect("The agent has no container; deploy or redeploy it first.")
    return engine_call(agent, lambda backend: backend.stats(agent), reading=True)


def stats_history_list(*, agent: Agent, window: Window) -> list[dict]:
    """The spec's "Stats history record"s of the agent in the window, oldest first."""
    return history_records(agent_id=agent.pk, window=window)
