"""The users session tokens name, kept in this process for USER_CACHE_SECONDS.

Every authenticated request used to read its user's row; the row changes rarely. An entry is
keyed by user id and token version, so a token issued under an older version never matches
one (revocation bumps the version: accounts.tokens.sessions_revoke). Whatever changes a user
(save, delete, revocation; `users_changed()`) empties this process's cache at once and
touches a stamp file under VAR_DIR that every process of this host checks per request (one
stat), so the other web workers empty theirs before their next request. A process on another
host sees a change at the latest when its entry expires (USER_CACHE_SECONDS, default 5 s).

Each request gets a fresh User instance built from the cached column values, so a request
that changes its user object changes nothing another request sees.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from uuid import UUID

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS

from .models import User

# (user id, token version) -> (monotonic expiry, column values of the row in `_FIELDS` order)
_entries: dict[tuple[UUID, int], tuple[float, tuple]] = {}
_stamp_seen: int | None = None
_MAX_ENTRIES = 10_000  # beyond that the whole cache is dropped: no user is ever served stale


def _stamp_path() -> Path:
    return Path(settings.VAR_DIR) / "user-cache.stamp"


def _stamp() -> int:
    try:
        return os.stat(_stamp_path()).st_mtime_ns
    except FileNotFoundError:
        return 0


def _fields() -> list[str]:
    return [field.attname for field in User._meta.concrete_fields]


def cached_user(user_id: UUID, token_version: int):
    """The active user with this id and token version, from this process's cache, or None."""
    global _stamp_seen
    if settings.USER_CACHE_SECONDS <= 0:
        return None
    stamp = _stamp()
    if stamp != _stamp_seen:  # some process changed a user since: nothing cached may be trusted
        _entries.clear()
        _stamp_seen = stamp
        return None
    entry = _entries.get((user_id, token_version))
    if entry is None:
        return None
    if entry[0] < time.monotonic():
        del _entries[(user_id, token_version)]
        return None
    return User.from_db(DEFAULT_DB_ALIAS, _fields(), entry[1])


def remember_user(user) -> None:
    """Cache an active user just read from the database (with the stamp seen before the read)."""
    if settings.USER_CACHE_SECONDS <= 0 or not user.is_active:
        return
    if len(_entries) >= _MAX_ENTRIES:
        _entries.clear()
    values = tuple(getattr(user, name) for name in _fields())
    _entries[(user.pk, user.token_version)] = (time.monotonic() + settings.USER_CACHE_SECONDS, values)


def users_changed() -> None:
    """A user changed (profile, role, activity, revocation): every process drops its cache."""
    global _stamp_seen
    _entries.clear()
    path = _stamp_path()
    previous = _stamp()
    now = max(time.time_ns(), previous + 1)  # always moves, even within one clock tick
    try:
        path.touch(exist_ok=True)
        os.utime(path, ns=(now, now))
    except OSError:
        pass  # read-only VAR_DIR: other processes rely on the expiry alone
    _stamp_seen = None
