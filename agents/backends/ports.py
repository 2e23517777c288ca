"""Host port bookkeeping for Docker engines: which ports fleet containers hold, and a free one.

The engine itself is the record: every fleet container carries its port in the
`fleet.host_port` label (host network mode publishes nothing, so the label is the only trace)
and, in bridge mode, in its published ports too.
"""

from __future__ import annotations

import random
import socket
from collections.abc import Iterable

from agents.backends.base import BackendError

PORT_LABEL = "fleet.host_port"


class NoFreePort(BackendError):
    """Every port of the range is taken on this engine."""


def container_ports(summary: dict) -> set[int]:
    """The host ports one container holds, from a `GET /containers/json` summary."""
    ports: set[int] = set()
    label = (summary.get("Labels") or {}).get(PORT_LABEL, "")
    if label.isdigit():
        ports.add(int(label))
    for binding in summary.get("Ports") or []:
        if binding.get("PublicPort"):
            ports.add(int(binding["PublicPort"]))
    return ports


def ports_in_use(summaries: Iterable[dict]) -> dict[int, list[str]]:
    """Map each host port held by the given containers to the ids of the containers holding it."""
    holders: dict[int, list[str]] = {}
    for summary in summaries:
        for port in container_ports(summary):
            holders.setdefault(port, []).append(summary["Id"])
    return holders


def port_is_bindable(port: int) -> bool:
    """Whether nothing on this machine listens on `port` (for host-network containers on a
    local engine, whose ports are this machine's ports)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


def choose_port(taken: Iterable[int], port_range: tuple[int, int], *, probe_local: bool = False) -> int:
    """A port of the inclusive range not in `taken`. Random rather than lowest-first, so
    concurrent deploys rarely pick the same one and the post-create check rarely has to retry."""
    low, high = port_range
    candidates = sorted(set(range(low, high + 1)) - set(taken))
    random.shuffle(candidates)
    for port in candidates:
        if not probe_local or port_is_bindable(port):
            return port
    raise NoFreePort(f"No free host port is left in {low}-{high} on this Docker engine.")
