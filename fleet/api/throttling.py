"""Cache-backed throttles per client IP with windows such as '20/15m' or '20/1d'."""

from __future__ import annotations

import re

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
