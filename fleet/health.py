"""The checks behind GET /api/health: database, Redis, the worker heartbeat, the checks apps
register (`health_check_register`; agents registers `engines`, a word per target), and the
configuration warnings apps register (`health_warning_register`: sentences saying what to set;
agents warns when bridged agents could not reach Fleet).

Each check answers a short word (or, for a registered check, a word per item) and never
raises. `status` is "ok" when every check is ok (Redis "not_configured" and an engine's
"unknown", not probed yet, count as ok: the worker check already says when the probes stop),
else "degraded". The HTTP status is 503 only when this web process cannot serve requests
(database or configured Redis down), so a load balancer takes it out of rotation; a
stale or missing worker degrades the body but keeps 200, because a stopped worker must
not take the whole API offline. Monitoring should alert on the body's `status`. Warnings
leave `status` as it is: they name a setting that is likely wrong, not a failure seen.

A registered check may name items that belong to users (agents' `engines`: `remote:<id>` of a
user's Remote Docker host). `private_item` says which: the public report (anonymous callers,
anyone but a platform admin) leaves those out and counts them in `totals` instead, a number
per word; `status` is worked out from every item either way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import redis
from django.conf import settings
from django.db import connection

from .heartbeat import heartbeat_state

logger = logging.getLogger(__name__)

OK, ERROR, NOT_CONFIGURED, UNKNOWN = "ok", "error", "not_configured", "unknown"
HEALTHY = (OK, NOT_CONFIGURED, UNKNOWN)
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


_redis_clients: dict[str, redis.Redis] = {}  # by URL: the check's connection, kept between checks


def _redis_client(url: str) -> redis.Redis:
    client = _redis_clients.get(url)
    if client is None:
        client = redis.Redis.from_url(url, socket_connect_timeout=TIMEOUT_SECONDS, socket_timeout=TIMEOUT_SECONDS)
        _redis_clients[url] = client
    return client


def health_connections_close() -> None:
    """Close the Redis check's connections (the web server's master does before it forks its
    workers: a socket shared across a fork answers two processes)."""
    for client in _redis_clients.values():
        client.connection_pool.disconnect()
    _redis_clients.clear()


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


# Checks apps add (name -> callable answering {item: word}); the kernel cannot import them.
_registered: dict[str, Callable[[], dict[str, str]]] = {}
# name -> which of its items only a platform admin sees by name (the others see totals).
_private_items: dict[str, Callable[[str], bool]] = {}


def health_check_register(name: str, check: Callable[[], dict[str, str]], *,
                          private_item: Callable[[str], bool] | None = None) -> None:
    """Add `checks.<name>` to /api/health: a word per item (e.g. per engine). Items for which
    `private_item(item)` is true are listed to platform admins only (module docstring)."""
    _registered[name] = check
    if private_item is not None:
        _private_items[name] = private_item
    else:
        _private_items.pop(name, None)


def _registered_check(name: str, check: Callable[[], dict[str, str]]) -> dict[str, str]:
    try:
        return check()
    except Exception:
        logger.warning("Health: the %s check failed", name, exc_info=True)
        return {"*": ERROR}


# Configuration warnings apps add: each callable answers a sentence, or None when all is well.
_warnings: dict[str, Callable[[], str | None]] = {}


def health_warning_register(name: str, warning: Callable[[], str | None]) -> None:
    """Add a sentence to `warnings` of /api/health whenever `warning()` answers one."""
    _warnings[name] = warning


def _registered_warnings() -> list[str]:
    sentences = []
    for name, warning in _warnings.items():
        try:
            sentence = warning()
        except Exception:
            logger.warning("Health: the %s warning could not be worked out", name, exc_info=True)
            continue
        if sentence:
            sentences.append(sentence)
    return sentences


def _words(value) -> list[str]:
    return list(value.values()) if isinstance(value, dict) else [value]


def _status_of(checks: dict) -> str:
    healthy = all(word in HEALTHY for value in checks.values() for word in _words(value))
    return "ok" if healthy else "degraded"


@dataclass(frozen=True)
class HealthReport:
    checks: dict  # check name -> its word, or {item: word} for a registered check
    warnings: list[str]  # configuration warnings, each a sentence saying what to set
    status: str  # "ok" or "degraded", from every item (also those the report leaves out)
    totals: dict  # check name -> {word: count} of the items left out (public report only)

    @property
    def serving(self) -> bool:
        """Whether this process can answer requests (else /api/health is a 503)."""
        return all(self.checks[name] != ERROR for name in SERVING_CHECKS)


def _public(name: str, value) -> tuple[dict | str, dict | None]:
    """(what anyone may see of a check, the totals of what it leaves out or None)."""
    private = _private_items.get(name)
    if private is None or not isinstance(value, dict):
        return value, None
    shown, totals = {}, {}
    for item, word in value.items():
        if private(item):
            totals[word] = totals.get(word, 0) + 1
        else:
            shown[item] = word
    return shown, totals


def health_report(*, detailed: bool = False) -> HealthReport:
    """Every check; `detailed` (a platform admin) lists every item by name, else the items of
    users are counted in `totals` only."""
    checks: dict = {"database": check_database(), "redis": check_redis(), "worker": check_worker()}
    for name, check in _registered.items():
        checks[name] = _registered_check(name, check)
    status = _status_of(checks)
    totals: dict = {}
    if not detailed:
        for name in list(checks):
            checks[name], left_out = _public(name, checks[name])
            if left_out is not None:
                totals[name] = left_out
    return HealthReport(checks=checks, warnings=_registered_warnings(), status=status, totals=totals)
