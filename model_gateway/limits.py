"""An agent's calls and tokens per minute at the gateway, counted in the cache (fixed windows).

Calls are counted as they are admitted; tokens as the provider reports them, when the call is
settled, so a call is refused once the minute's tokens have reached the limit (the call that
crosses it is the last of its minute). With the cache away the limits are not checked and calls
go through: they smooth an agent's pace, while what protects money, the budget caps, is
checked in the database.
"""

from __future__ import annotations

import logging
import time

from django.core.cache import cache

from fleet.api.throttling import CACHE_AWAY, counter_add, rate_hit
from fleet.errors import CacheUnavailable

from .errors import RateLimited

logger = logging.getLogger(__name__)

WINDOW_SECONDS = 60


def _window() -> tuple[int, int]:
    """(start of the current minute, whole seconds until it ends, at least 1)."""
    now = time.time()
    start = int(now // WINDOW_SECONDS) * WINDOW_SECONDS
    return start, max(1, int(start + WINDOW_SECONDS - now + 0.999))


def _tokens_key(agent_id, start: int) -> str:
    return f"model_gateway:tokens:{agent_id}:{start}"


def calls_take(agent_id, per_minute: int) -> None:
    """Count one call, or RateLimited when the minute already had `per_minute`."""
    try:
        wait = rate_hit("model_gateway_calls", str(agent_id), f"{per_minute}/1m")
    except CacheUnavailable:
        return
    if wait is not None:
        raise RateLimited(f"The agent may make {per_minute} model calls a minute.", retry_after=int(wait + 0.999))


def tokens_check(agent_id, per_minute: int) -> None:
    """RateLimited when the minute's tokens have reached `per_minute`."""
    start, left = _window()
    try:
        used = cache.get(_tokens_key(agent_id, start)) or 0
    except CACHE_AWAY as exc:
        logger.warning("Model gateway token limit not checked, the cache is unavailable: %s", exc)
        return
    if used >= per_minute:
        raise RateLimited(f"The agent may use {per_minute} tokens a minute.", retry_after=left)


def tokens_add(agent_id, tokens: int) -> None:
    """Count a settled call's tokens in the current minute."""
    if tokens <= 0:
        return
    start, _ = _window()
    key = _tokens_key(agent_id, start)
    try:
        counter_add(key, tokens, timeout=WINDOW_SECONDS + 5)
    except CACHE_AWAY as exc:
        logger.warning("Model gateway tokens not counted, the cache is unavailable: %s", exc)
