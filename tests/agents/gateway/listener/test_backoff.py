"""How long the listener waits before reconnecting: it grows, it is capped, it is jittered."""

from __future__ import annotations

import random

from agents.gateway.listener import Backoff, backoff_delay


def test_the_wait_doubles_with_each_failure_until_the_cap():
    lowest = [backoff_delay(n, base=1, cap=60, rng=lambda: 0.0) for n in range(10)]
    highest = [backoff_delay(n, base=1, cap=60, rng=lambda: 1.0) for n in range(10)]

    assert highest == [1, 2, 4, 8, 16, 32, 60, 60, 60, 60]
    assert lowest == [h / 2 for h in highest]


def test_the_wait_never_passes_the_cap_even_after_very_many_failures():
    assert backoff_delay(10_000, base=1, cap=60, rng=lambda: 1.0) == 60
    assert backoff_delay(10_000, base=1, cap=60, rng=lambda: 0.0) == 30


def test_jitter_spreads_agents_that_failed_together():
    rng = random.Random(7)

    waits = [backoff_delay(3, base=1, cap=60, rng=rng.random) for _ in range(200)]

    assert all(4 <= w <= 8 for w in waits)
    assert len({round(w, 3) for w in waits}) > 150


def test_the_default_policy_starts_at_about_a_second_and_refusals_wait_long():
    policy = Backoff()

    assert 0.5 <= policy.delay(0) <= 1.0
    assert policy.delay(50) <= policy.cap == 60
    assert policy.refused >= 10 * policy.cap
