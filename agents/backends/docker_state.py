"""A container's inspect answer -> LiveState, as a pure function, shared by the blocking
backend (docker-py) and the event-loop reader of the monitoring sweep (docker_inspect_async)."""

from __future__ import annotations

from agents.backends import docker_stats
from agents.backends.base import LiveState
from agents.backends.ports import PORT_LABEL

MISSING = LiveState(exists=False, running=False, status="missing")


def label_port(attrs: dict) -> int | None:
    """The host port recorded on the container's label at creation."""
    value = ((attrs.get("Config") or {}).get("Labels") or {}).get(PORT_LABEL, "")
    return int(value) if value.isdigit() else None


def live_state(attrs: dict, *, node: str | None) -> LiveState:
    """What the engine says of the container (`attrs`: its inspect answer) on the engine `node`."""
    state = attrs.get("State") or {}
    return LiveState(
        exists=True,
        running=bool(state.get("Running")),
        status=state.get("Status") or "unknown",
        exit_code=state.get("ExitCode"),
        restart_count=attrs.get("RestartCount") or 0,
        oom_killed=bool(state.get("OOMKilled")),  # kept while the engine's restart runs again
        started_at=docker_stats.parse_docker_time(state.get("StartedAt")),
        host_port=label_port(attrs),
        node=node or None,
    )
