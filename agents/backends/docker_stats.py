"""Docker stats payload -> StatsSnapshot, as pure functions, and the cache of previous CPU
readings that lets a one-shot stats read give a CPU %.

The maths: CPU % = delta container usage / delta system usage x online CPUs x 100; memory =
usage minus page cache (`inactive_file` on cgroup v2, `cache` on v1); network = the sum over
interfaces; disk = the sum of block-device reads and writes; MB = bytes / 1024^2.

Kept apart from the backend so the maths can be tested on recorded cgroup v1 and v2
payloads without an engine.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime

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


@dataclass(frozen=True)
class CpuSample:
    """One reading of a container's cumulative CPU counters (nanoseconds)."""

    container_ns: int  # CPU time the container has used
    system_ns: int  # CPU time the host has spent, all CPUs, busy or idle
    online_cpus: int
    at: float = 0.0  # time.monotonic() of the reading in this process; only the cache's age limit uses it


def cpu_sample(stats: dict, *, at: float = 0.0, key: str = "cpu_stats") -> CpuSample | None:
    """The `cpu_stats` (or `precpu_stats`) counters of a payload; None when it has no system
    figure (a one-shot payload's precpu_stats, a container that stopped as it was read)."""
    cpu = stats.get(key) or {}
    system = cpu.get("system_cpu_usage") or 0
    if not system:
        return None
    usage = cpu.get("cpu_usage") or {}
    online = cpu.get("online_cpus") or len(usage.get("percpu_usage") or []) or 1
    return CpuSample(int(usage.get("total_usage") or 0), int(system), int(online), at)


def window_seconds(earlier: CpuSample, later: CpuSample) -> float:
    """Wall time between two readings as the engine's host measured it: system CPU time
    advances by online CPUs x elapsed time. Negative when `later` is the older reading."""
    return (later.system_ns - earlier.system_ns) / later.online_cpus / 1e9


def cpu_percent_between(earlier: CpuSample, later: CpuSample) -> float | None:
    """Delta container CPU time / delta system CPU time x online CPUs x 100, or None when the
    pair holds no delta: the container's counter went back (it restarted, a new cgroup), the
    CPU count changed, or no system time passed."""
    cpu_delta = later.container_ns - earlier.container_ns
    system_delta = later.system_ns - earlier.system_ns
    if cpu_delta < 0 or system_delta <= 0 or later.online_cpus != earlier.online_cpus:
        return None
    return cpu_delta / system_delta * later.online_cpus * 100.0


def cpu_percent(stats: dict) -> float:
    """CPU % from the two samples of one two-sample (`stream=false`) payload; 0.0 when it holds
    only one (a one-shot read: a delta from zero would be a lifetime average)."""
    later = cpu_sample(stats)
    earlier = cpu_sample(stats, key="precpu_stats")
    if later is None or earlier is None:
        return 0.0
    # Old engines leave online_cpus out of precpu_stats; both samples are of the same host.
    earlier = CpuSample(earlier.container_ns, earlier.system_ns, later.online_cpus)
    percent = cpu_percent_between(earlier, later)
    return percent if percent is not None else 0.0


class CpuSampleCache:
    """The last CPU reading of each container in this process, so the next one-shot read gives
    a CPU % over the time between the two. Per process: the sampler (worker) and live reads
    (each web worker) keep their own, and a process that has none of a container says so.

    Bounded (the least recently read container goes first) and safe to share between threads.
    """

    def __init__(self, *, max_entries: int = 10_000, max_age: float = 30.0, min_window: float = 0.25):
        # max_age: three sampler periods; a reading older than that would turn the figure into
        # a long average. min_window: /proc/stat counts in 10 ms ticks per CPU, so a shorter
        # window carries a rounding error of several percent of the figure.
        self.max_entries = max_entries
        self.max_age = max_age
        self.min_window = min_window
        self._entries: OrderedDict[str, tuple[CpuSample, float]] = OrderedDict()
        self._lock = threading.Lock()

    def percent(self, key: str, sample: CpuSample) -> float | None:
        """CPU % of `sample` against the previous reading of `key`, kept for the next call; None
        when there is no usable previous reading (first read, too old, restarted), in which
        case the caller takes a second reading and `record`s it."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            previous, last_percent = entry
            if sample.at - previous.at > self.max_age or sample.online_cpus != previous.online_cpus:
                return None
            if window_seconds(previous, sample) < self.min_window:
                # Too close to the kept reading (concurrent reads, or an older one arriving
                # late): repeat its figure and keep it, so the next window is long enough.
                self._entries.move_to_end(key)
                return last_percent
            percent = cpu_percent_between(previous, sample)
            if percent is None:
                return None  # the counter went back: the container restarted since
            self._store(key, sample, percent)
            return percent

    def record(self, key: str, sample: CpuSample, percent: float) -> None:
        with self._lock:
            self._store(key, sample, percent)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def _store(self, key: str, sample: CpuSample, percent: float) -> None:
        self._entries[key] = (sample, percent)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)


# The gap between the two readings of a container this process has no recent reading of:
# long enough for a steady figure (see CpuSampleCache.min_window), short enough for a live read.
FIRST_READ_WINDOW = 0.25
# Each container's last CPU reading in this process, for the CPU % of its next one-shot read
# (the Docker backend's reads, blocking or on the event loop, share it).
CPU_SAMPLES = CpuSampleCache()


def reading_key(container_id: str, started_at: str) -> str:
    """A container's key in the cache: a restart starts a new counter from zero, so readings of
    an earlier run must never be compared with this one's."""
    return f"{container_id}@{started_at}"


def first_reading(payload: dict, key: str, *, at: float) -> tuple[CpuSample | None, float | None]:
    """(the payload's CPU reading, its CPU % against the kept one). The reading is None when the
    payload has no CPU figures (stopped as it was read: its CPU % is 0); the CPU % is None when
    no kept reading serves (first read, too old, restarted): then a second read is needed
    (`second_reading`)."""
    sample = cpu_sample(payload, at=at)
    if sample is None:
        return None, 0.0
    return sample, CPU_SAMPLES.percent(key, sample)


def second_reading(first: CpuSample, payload: dict, key: str, *, at: float) -> float:
    """The CPU % between two reads of one container, kept for its next read; 0.0 if it restarted
    or stopped between them (it has no CPU history to speak of)."""
    later = cpu_sample(payload, at=at)
    if later is None:
        return 0.0
    cpu = cpu_percent_between(first, later) or 0.0
    CPU_SAMPLES.record(key, later, cpu)
    return cpu


def stopped_payload(attrs: dict) -> dict:
    """What a stats read of a stopped container comes to: no usage, its memory limit."""
    return {"memory_stats": {"limit": (attrs.get("HostConfig") or {}).get("Memory") or 0}}


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
    stats: dict,
    *,
    running: bool,
    started_at: datetime | None,
    now: datetime | None = None,
    cpu: float | None = None,
) -> StatsSnapshot:
    """The spec's stats snapshot from one `GET /containers/:id/stats?stream=false` payload.
    `cpu`: the CPU % worked out against an earlier reading (one-shot payloads carry no
    precpu_stats); without it, from the payload's own two samples."""
    now = now or datetime.now(UTC)
    used = memory_usage_bytes(stats)
    limit = (stats.get("memory_stats") or {}).get("limit", 0)
    rx, tx = network_bytes(stats)
    read, write = block_io_bytes(stats)
    uptime = (now - started_at).total_seconds() if running and started_at else 0.0
    return StatsSnapshot(
        cpu_percent=cpu_percent(stats) if cpu is None else cpu,
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
