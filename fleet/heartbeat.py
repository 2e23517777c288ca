"""The worker heartbeat: proof that beat, the broker and a worker are all doing their job.

Beat queues `fleet.worker_heartbeat` every HEARTBEAT_EVERY_SECONDS; the worker that runs
it writes the time to the cache (and a worker writes it once when it starts). /api/health
calls the worker "stale" when the last beat is older than HEARTBEAT_STALE_SECONDS and
"missing" when there has never been one (or the cache lost it).
"""

from __future__ import annotations

import socket
import time

from django.core.cache import cache

HEARTBEAT_KEY = "fleet:worker-heartbeat"
HEARTBEAT_EVERY_SECONDS = 30
HEARTBEAT_STALE_SECONDS = 3 * HEARTBEAT_EVERY_SECONDS + 5  # two ticks may be lost before we worry
_KEEP_SECONDS = 7 * 24 * 3600  # long enough that "stale" is reported rather than "missing"


def heartbeat_record(*, hostname: str | None = None, at: float | None = None) -> None:
    cache.set(
        HEARTBEAT_KEY,
        {"at": time.time() if at is None else at, "hostname": hostname or socket.gethostname()},
        timeout=_KEEP_SECONDS,
    )


def heartbeat_age() -> float | None:
    """Seconds since the last heartbeat, or None if there was none."""
    beat = cache.get(HEARTBEAT_KEY)
    if not isinstance(beat, dict) or "at" not in beat:
        return None
    return max(0.0, time.time() - float(beat["at"]))


def heartbeat_state() -> str:
    """"ok", "stale" or "missing"."""
    age = heartbeat_age()
    if age is None:
        return "missing"
    return "ok" if age <= HEARTBEAT_STALE_SECONDS else "stale"
