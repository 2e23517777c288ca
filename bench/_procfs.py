"""What the side-by-side harness reads from /proc: CPU time and memory of process trees, the
PostgreSQL backends serving one database, the machine's hardware and load."""

from __future__ import annotations

import os
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str]:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2:].split()  # after "pid (comm) "; comm may hold spaces


def children_of(pid: int) -> list[int]:
    """pid and every descendant (gunicorn's master and workers, granian's too)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parents.setdefault(int(_stat_fields(int(entry))[1]), []).append(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo.extend(parents.get(current, []))
    return tree


def listening_process(port: int) -> int | None:
    """The process serving TCP `port` (IPv4 or IPv6); None when nothing listens there. Workers
    that inherit the listening socket from their master lead to the master; workers that each
    open their own (SO_REUSEPORT, as granian's do) lead to their common parent when there are
    two or more of them. A single worker under a master is found alone: name the master then."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                inodes.add(f"socket:[{fields[9]}]")
    holders = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            descriptors = os.listdir(f"/proc/{entry}/fd")
            if any(os.readlink(f"/proc/{entry}/fd/{fd}") in inodes for fd in descriptors):
                holders[int(entry)] = int(_stat_fields(int(entry))[1])
        except OSError:
            continue
    eldest = {pid: parent for pid, parent in holders.items() if parent not in holders}
    parents = set(eldest.values())
    if len(eldest) > 1 and len(parents) == 1:
        return parents.pop()
    return min(eldest) if eldest else None


def cpu_seconds(pids: list[int]) -> dict[int, float]:
    """User plus system CPU of each of these processes (threads included), in seconds."""
    seconds = {}
    for pid in pids:
        try:
            fields = _stat_fields(pid)
        except OSError:
            continue  # gone since listed
        seconds[pid] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime
    return seconds


def cpu_spent(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds spent between two cpu_seconds() readings by the processes alive at the end
    (a process that started in between counts whole; one that ended is not counted)."""
    return sum(total - before.get(pid, 0.0) for pid, total in after.items())


def postgres_backends(database: str) -> list[int]:
    """The PostgreSQL backend processes connected to `database` (titles `postgres: [cluster:]
    user db host(port) state`); other databases' backends, other work on the machine, are left out."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            title = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        words = title.split()
        if words[:1] == ["postgres:"] and database in words[2:4]:
            pids.append(int(entry))
    return pids


def memory_mb(pids: list[int]) -> tuple[float, float]:
    """(resident, proportional) MB summed over the processes: RSS counts pages forked workers
    share with their master once per process; PSS splits them, so its sum is what they cost."""
    rss = pss = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                name, _, value = line.partition(":")
                if name == "Rss":
                    rss += int(value.split()[0])
                elif name == "Pss":
                    pss += int(value.split()[0])
        except OSError:
            continue
    return rss / 1024, pss / 1024


def hardware() -> str:
    model = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.partition(":")[2].strip()
            break
    mem_kb = int(Path("/proc/meminfo").read_text().split()[1])
    return f"{os.cpu_count()} x {model}, {mem_kb / 1024 / 1024:.1f} GB RAM"


def python_speed_ms() -> float:
    """Milliseconds this machine's Python takes for a fixed loop (best of five): machines of
    the same name differ, and so does one machine from day to day (noisy neighbours), so runs
    on different days are compared through this figure."""
    import time

    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        total = 0
        for i in range(2_000_000):
            total += i
        best = min(best, time.process_time() - start)
    return best * 1000


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def busy_share(seconds_before: tuple[int, int], seconds_after: tuple[int, int]) -> float:
    """The machine's busy share between two cpu_totals() readings (0..1, all cores)."""
    busy = seconds_after[0] - seconds_before[0]
    total = seconds_after[1] - seconds_before[1]
    return busy / total if total else 0.0


def cpu_totals() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return sum(fields) - idle, sum(fields)
