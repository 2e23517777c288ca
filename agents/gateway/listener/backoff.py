"""How long a listener waits before connecting to an agent again.

Exponential with "equal jitter": the n-th consecutive failure waits between half and all of
min(cap, base * 2^n). The random half spreads the reconnects of many agents that dropped
together (a host restart) so they do not all come back in the same second; the fixed half keeps
a failing agent from being retried at once.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

BASE_SECONDS = 1.0
CAP_SECONDS = 60.0
# A refused token or protocol needs an operator, not a retry: try again rarely.
REFUSED_SECONDS = 600.0
# A connection that stayed up this long was healthy: the next drop starts from the base again.
STABLE_SECONDS = 60.0


def backoff_delay(failures: int, *, base: float = BASE_SECONDS, cap: float = CAP_SECONDS,
                  rng: Callable[[], float] = random.random) -> float:
    """Seconds to wait after `failures` consecutive failures (0 for the first)."""
    ceiling = min(cap, base * 2 ** min(max(failures, 0), 32))  # bounded exponent: no overflow
    return ceiling / 2 + rng() * ceiling / 2


@dataclass(frozen=True)
class Backoff:
    """The waits of one listener (tests shorten them)."""

    base: float = BASE_SECONDS
    cap: float = CAP_SECONDS
    refused: float = REFUSED_SECONDS
    stable: float = STABLE_SECONDS

    def delay(self, failures: int) -> float:
        return backoff_delay(failures, base=self.base, cap=self.cap)
