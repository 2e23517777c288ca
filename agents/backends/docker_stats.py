"""Docker stats payload -> StatsSnapshot (DESIGN.md section 5), as pure functions.

Kept apart from the backend so the maths can be tested on recorded cgroup v1 and v2
payloads without an engine.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from agents.backends.base import StatsSnapshot

MB = 1024 * 1024

# Docker writes RFC 3339 with up to nine fractional digits, which datetime cannot parse as is.
_TIMESTAMP = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$")


def parse_docker_time(value: str | None) -> datetime | None:
    """An aware datetime (microseconds) from Docker's timestamp; None for its zero time."""
    match = _TIMESTAMP.match(value or "")
    if not match:
        return None
    whole, fraction, zone = match.groups()
    micros = (fraction or "0")[:6].ljust(6, "0")
    zone = "+00:00" if zone == "Z" else zone
    parsed = datetime.fromisoformat(f"{whole}.{micros}{zone}")
    return None if parsed.year <= 1 else parsed


def docker_time_ns(value: str) -> int:
    """Nanoseconds since the epoch, exact, for ordering containers created in the same second."""
    match = _TIMESTAMP.match(value or "")
    if not match:
        return 0
    whole, fraction, zone = match.groups()
    zone = "+00:00" if zone == "Z" else zone
    seconds = int(datetime.fromisoformat(f"{whole}{zone}").timestamp())
    return seconds * 1_000_000_000 + int((fraction or "0")[:9].ljust(9, "0"))


def cpu_percent(stats: dict) -> float:
    """Delta container CPU time / delta system CPU time x online CPUs x 100."""
    cpu = stats.get("cpu_stats") or {}
    pre = stats.get("precpu_stats") or {}
    usage = cpu.get("cpu_usage") or {}
    cpu_delta = usage.get("total_usage", 0) - (pre.get("cpu_usage") or {}).get("total_usage", 0)
    system_delta = cpu.get("system_cpu_usage", 0) - pre.get("system_cpu_usage", 0)
    online = cpu.get("online_cpus") or len(usage.get("percpu_usage") or []) or 1
    # No previous sample (a one-shot read): a delta from zero would be a lifetime average.
    if not pre.get("system_cpu_usage") or cpu_delta <= 0 or system_delta <= 0:
        return 0.0
    return cpu_delta / system_delta * online * 100.0


def memory_usage_bytes(stats: dict) -> int:
    """Usage without page cache: minus `cache` on cgroup v1, minus `inactive_file` on v2
    (only v1 payloads carry a `cache` key)."""
    memory = stats.get("memory_stats") or {}
    usage = memory.get("usage", 0)
    detail = memory.get("stats") or {}
    page_cache = detail["cache"] if "cache" in detail else detail.get("inactive_file", 0)
    # A cache figure above usage is a torn read; report the raw usage rather than nothing.
    return usage - page_cache if page_cache <= usage else usage


def network_bytes(stats: dict) -> tuple[int, int]:
    """(received, transmitted) summed over every interface; host-mode containers have none."""
    interfaces = (stats.get("networks") or {}).values()
    return sum(i.get("rx_bytes", 0) for i in interfaces), sum(i.get("tx_bytes", 0) for i in interfaces)


def block_io_bytes(stats: dict) -> tuple[int, int]:
    """(read, written) summed over block devices; v1 says Read/Write, v2 read/write."""
    entries = (stats.get("blkio_stats") or {}).get("io_service_bytes_recursive") or []
    read = sum(e.get("value", 0) for e in entries if str(e.get("op", "")).lower() == "read")
    write = sum(e.get("value", 0) for e in entries if str(e.get("op", "")).lower() == "write")
    return read, write


def snapshot_from_stats(
    stats: dict, *, running: bool, started_at: datetime | None, now: datetime | None = None
) -> StatsSnapshot:
    """The spec's stats snapshot from one `GET /containers/:id/stats?stream=false` payload."""
    now = now or datetime.now(timezone.utc)
    used = memory_usage_bytes(stats)
    limit = (stats.get("memory_stats") or {}).get("limit", 0)
    rx, tx = network_bytes(stats)
    read, write = block_io_bytes(stats)
    uptime = (now - started_at).total_seconds() if running and started_at else 0.0
    return StatsSnapshot(
        cpu_percent=cpu_percent(stats),
        memory_usage_mb=used / MB,
        memory_limit_mb=limit / MB,
        memory_percent=used / limit * 100.0 if limit else 0.0,
        network_rx_mb=rx / MB,
        network_tx_mb=tx / MB,
        disk_read_mb=read / MB,
        disk_write_mb=write / MB,
        pids=int((stats.get("pids_stats") or {}).get("current", 0) or 0),
        uptime_seconds=max(uptime, 0.0),
        running=running,
    )
