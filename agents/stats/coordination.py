"""Coordination of sampler ticks across worker processes, through the shared cache.

A lock keeps two ticks from overlapping: `add` is atomic (Redis in production), so
exactly one tick gets it. The lock's timeout only matters when a worker dies holding
it: far longer than a tick can run (the sampler's budget bounds a tick), short enough
that a crash costs only a few ticks. Counters record what happened (ticks skipped).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from django.core.cache import cache

LOCK_TIMEOUT_SECONDS = 60


@contextmanager
def held(name: str, *, timeout: int = LOCK_TIMEOUT_SECONDS) -> Iterator[bool]:
    """Yields True when this caller holds the lock, False when someone else does."""
    key = f"lock:{name}"
    token = uuid.uuid4().hex
    acquired = cache.add(key, token, timeout=timeout)
    try:
        yield acquired
    finally:
        if acquired and cache.get(key) == token:
            cache.delete(key)


def count(name: str) -> int:
    """Bump a cache counter (created on first use) and return its new value."""
    key = f"count:{name}"
    cache.add(key, 0, timeout=None)
    return cache.incr(key)

