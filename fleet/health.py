"""The checks behind GET /api/health: database, Redis and the worker heartbeat.

Each check answers a short word and never raises. `status` is "ok" when every check is
ok (Redis "not_configured" counts as ok: the embedded setup runs without it), else
"degraded". The HTTP status is 503 only when this web process cannot serve requests
(database or configured Redis down), so a load balancer takes it out of rotation; a
stale or missing worker degrades the body but keeps 200, because a stopped worker must
not take the whole API offline. Monitoring should alert on the body's `status`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache

import redis
from django.conf import settings
from django.db import connection

from .heartbeat import heartbeat_state

logger = logging.getLogger(__name__)

OK, ERROR, NOT_CONFIGURED = "ok", "error", "not_configured"
SERVING_CHECKS = ("database", "redis")  # without these, this process cannot answer requests
TIMEOUT_SECONDS = 2


def check_database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
        return OK
    except Exception:
        logger.warning("Health: the database check failed", exc_info=True)
        return ERROR


@lru_cache(maxsize=4)
def _redis_client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=TIMEOUT_SECONDS, socket_timeout=TIMEOUT_SECONDS)


def check_redis() -> str:
    url = settings.REDIS_URL
    if not url:
        return NOT_CONFIGURED
    try:
        return OK if _redis_client(url).ping() else ERROR
    except Exception:
        logger.warning("Health: the Redis check failed", exc_info=True)
        return ERROR


def check_worker() -> str:
    """"ok", "stale" (no heartbeat for a while) or "missing" (none ever), "error" if unreadable."""
    try:
        return heartbeat_state()
    except Exception:
        logger.warning("Health: the worker heartbeat could not be read", exc_info=True)
        return ERROR


@dataclass(frozen=True)
class HealthReport:
    checks: dict[str, str]  # check name -> its word

    @property
    def status(self) -> str:
        return "ok" if all(value in (OK, NOT_CONFIGURED) for value in self.checks.values()) else "degraded"

    @property
    def serving(self) -> bool:
        """Whether this process can answer requests (else /api/health is a 503)."""
        return all(self.checks[name] != ERROR for name in SERVING_CHECKS)


def health_report() -> HealthReport:
    return HealthReport(checks={"database": check_database(), "redis": check_redis(), "worker": check_worker()})
