"""Cache-backed throttles per client IP with windows such as '20/15m' or '20/1d'."""

from __future__ import annotations

import re
import time

from django.core.cache import cache
from rest_framework.exceptions import Throttled
from rest_framework.throttling import SimpleRateThrottle

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_RATE = re.compile(r"^(\d+)/(\d*)([smhd])$")


def parse_rate(rate: str) -> tuple[int, int]:
    match = _RATE.match(rate)
    if not match:
        raise ValueError(f"Bad rate {rate!r}; use e.g. '20/15m'.")
    count, multiplier, unit = match.groups()
    return int(count), int(multiplier or 1) * _UNITS[unit]


class IPRateThrottle(SimpleRateThrottle):
    """Counts requests per client IP for one named scope.

    Subclass with `scope` and `rate`; combine several on a view for burst + daily limits.
    """

    rate = "60/1m"

    def get_rate(self):
        return self.rate

    def parse_rate(self, rate):
        return parse_rate(rate)

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


def rate_hit(scope: str, ident: str, rate: str, *, cost: int = 1) -> float | None:
    """Count `cost` hits of `ident` against `rate` in a fixed window; the seconds to wait when
    that goes over it (nothing counted then), else None. For limits that are not one per
    request (per rule, per account, recipients per workspace) and for non-DRF views."""
    limit, window = parse_rate(rate)
    now = time.time()
    start = int(now // window) * window
    key = f"ratelimit:{scope}:{ident}:{start}"
    cache.add(key, 0, timeout=window + 5)
    try:
        count = cache.incr(key, cost)
    except ValueError:  # expired between add and incr: start the window again
        cache.set(key, cost, timeout=window + 5)
        count = cost
    if count > limit:
        cache.decr(key, cost)
        return max(1.0, start + window - now)
    return None


def throttle(scope: str, ident, rate: str, *, cost: int = 1) -> None:
    """Raise 429 rate_limited with Retry-After when `ident` is over `rate` in `scope`."""
    wait = rate_hit(scope, str(ident), rate, cost=cost)
    if wait is not None:
        raise Throttled(wait=wait)
