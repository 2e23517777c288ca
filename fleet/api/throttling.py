"""Cache-backed throttles per client IP with windows such as '20/15m' or '20/1d'.

A cache that cannot be reached (Redis down) makes a throttled request a 503 cache_unavailable,
never a 500: the limit cannot be checked, so the request is not served either; `throttle`'s
"serve" is the exception, for limits on work the database keeps (deploys, usage reports)."""

from __future__ import annotations

import logging
import re
import time

from django.conf import settings
from django.core.cache import cache
from redis.exceptions import RedisError
from rest_framework.exceptions import Throttled
from rest_framework.throttling import SimpleRateThrottle

from fleet.errors import CacheUnavailable

logger = logging.getLogger(__name__)

# What the cache raises when its server is away: Redis, or the file cache's directory.
CACHE_AWAY = (RedisError, OSError)


def _unavailable(exc: Exception) -> CacheUnavailable:
    logger.warning("A rate limit could not be checked, the cache is unavailable: %s", exc)
    return CacheUnavailable("The rate-limit store could not be reached; try again shortly.")

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

    def allow_request(self, request, view):
        try:
            return super().allow_request(request, view)
        except CACHE_AWAY as exc:
            raise _unavailable(exc) from exc


def counter_add(key: str, amount: int, *, timeout: float) -> int:
    """Add `amount` to the cache counter `key` (made at 0, living `timeout` seconds); its new
    value. Raises what the cache raises when it is away (CACHE_AWAY)."""
    cache.add(key, 0, timeout=timeout)
    try:
        return cache.incr(key, amount)
    except ValueError:  # expired between add and incr: start it again
        cache.set(key, amount, timeout=timeout)
        return amount


def rate_hit(scope: str, ident: str, rate: str, *, cost: int = 1) -> float | None:
    """Count `cost` hits of `ident` against `rate` in a fixed window; the seconds to wait when
    that goes over it (nothing counted then), else None. For limits that are not one per
    request (per rule, per account, recipients per workspace) and for non-DRF views.
    CacheUnavailable (503) when the cache cannot be reached."""
    limit, window = parse_rate(rate)
    now = time.time()
    start = int(now // window) * window
    key = f"ratelimit:{scope}:{ident}:{start}"
    try:
        count = counter_add(key, cost, timeout=window + 5)
        if count > limit:
            cache.decr(key, cost)
            return max(1.0, start + window - now)
    except CACHE_AWAY as exc:
        raise _unavailable(exc) from exc
    return None


def throttle(scope: str, ident, rate: str, *, cost: int = 1, when_cache_away: str = "refuse") -> None:
    """Raise 429 rate_limited with Retry-After when `ident` is over `rate` in `scope`.

    With the cache away, "refuse" answers 503 cache_unavailable (a limit that guards against
    guessing or abuse); "serve" lets the request through unchecked, for limits that only smooth
    bursts of work the database records durably (deploys, usage reports): an outage of the cache
    must not lose them."""
    try:
        wait = rate_hit(scope, str(ident), rate, cost=cost)
    except CacheUnavailable:
        if when_cache_away != "serve":
            raise
        return
    if wait is not None:
        raise Throttled(wait=wait)


def relay_test_throttle(*, subject: str, user_id, recipients_holder: str, recipients: int) -> None:
    """The one rule of the routes that send a real message on demand to addresses the caller
    chose (an alert rule's test, a legacy channel's test): they can relay mail and webhooks,
    so each is bounded per tested thing (`subject`: ALERT_TEST_RATE_PER_RULE), per user across
    every such route (ALERT_TEST_RATE_PER_USER), and in recipients per hour per
    `recipients_holder` (a workspace, an agent's owner: ALERT_TEST_RECIPIENTS_PER_HOUR; each
    email address and each webhook counts one). 429 rate_limited with Retry-After."""
    throttle("relay_test_subject", subject, settings.ALERT_TEST_RATE_PER_RULE)
    throttle("relay_test_user", user_id, settings.ALERT_TEST_RATE_PER_USER)
    throttle("relay_test_recipients", recipients_holder, f"{settings.ALERT_TEST_RECIPIENTS_PER_HOUR}/1h",
             cost=recipients)
