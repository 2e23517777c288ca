"""Benchmarks: they print figures and never pass or fail (targets: docs/performance.md).

`make bench` (`python -m bench [name ...]`) runs the `main()` of every module bench/<name>.py
against a throwaway database. A `main()` may assume that Django is set up, that the database
exists and starts empty (it is flushed after each module), and that os.environ["DATABASE_URL"]
points at it, so a server it starts (gunicorn) sees the same rows. It prints with `report()`.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    seconds: list[float]  # one per call

    @property
    def median_ms(self) -> float:
        return statistics.median(self.seconds) * 1000

    @property
    def p95_ms(self) -> float:
        ordered = sorted(self.seconds)
        return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] * 1000

    @property
    def per_second(self) -> float:
        """Calls per second, one after another."""
        return len(self.seconds) / sum(self.seconds)


def measure(fn: Callable[[], object], *, repeat: int = 50, warmup: int = 3) -> Timing:
    """Call `fn` `warmup` times unmeasured, then `repeat` times, timing each call."""
    for _ in range(warmup):
        fn()
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        seconds.append(time.perf_counter() - start)
    return Timing(seconds)


def report(title: str, **figures: object) -> None:
    """One line per measurement: `title: name=value, ...` (floats to 2 decimals)."""
    shown = ", ".join(
        f"{name}={value:.2f}" if isinstance(value, float) else f"{name}={value}"
        for name, value in figures.items()
    )
    print(f"  {title}: {shown}", flush=True)
