"""GET /agents from its version: an ETag on every answer, 304 Not Modified without
building the body, and the last body of each caller kept in this process.

The list version is one counter that database triggers bump in every transaction that writes
what a list shows (agents, assignments, workspaces, memberships, API keys, users' role,
activity and token version; an UPDATE only when a column the list depends on changes): the
design is in agents.list_triggers. A caller's answer is a function of the data, of who asks and
of the list's format, so (format, version, caller, scope) names it: the ETag is built from them
alone. The format (`list_format`) digests the list serializer's fields and LIST_FORMAT, so a
release that changes the list's shape never answers 304 to a body of the previous one.

The version is read before the rows, in its own statement: under READ COMMITTED the rows are
then at least as new as the version, never older, so a body is never kept under a version
newer than its data (a write committed in between only makes the entry miss next time).
Inside a transaction (tests, or code that already wrote in it) the body is neither read from
nor put in the cache: that transaction may see rows no one else will.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict

from django.conf import settings
from django.db import connection
from rest_framework.serializers import Serializer

from fleet.api.gzip import compress
from fleet.api.principal import Principal

from . import list_triggers

# Bump when a release changes what the list's bodies hold in a way its fields' names and types
# do not show (a value's format, an order, which rows): an ETag of the old format then never
# matches again.
LIST_FORMAT = 1

# caller key -> [ETag, body, the body gzipped (once a client asked for it) or None]
_bodies: OrderedDict[str, list] = OrderedDict()
_cached_bytes = 0

_READ = f"SELECT version FROM {list_triggers.VERSION_TABLE} WHERE id = 1"
_READ_IN_TRANSACTION = f"SELECT {list_triggers.READ_FUNCTION}()"


def list_version() -> int:
    """The current list version. Inside a transaction on PostgreSQL, one that covers the
    transaction's own writes so far (they would bump only at its commit; a list read after a
    write in the same transaction must not carry the ETag of before it), still one query."""
    in_transaction = connection.in_atomic_block and connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        cursor.execute(_READ_IN_TRANSACTION if in_transaction else _READ)
        return cursor.fetchone()[0]


def _describe(serializer) -> list:
    """Each field's name and type (nested serializers and lists of them included), in order."""
    described = []
    for name, field in serializer.fields.items():
        child = getattr(field, "child", None)
        inner = child if isinstance(child, Serializer) else field
        nested = _describe(inner) if isinstance(inner, Serializer) else None
        described.append([name, type(field).__name__, type(child).__name__ if child is not None else None,
                          bool(getattr(field, "allow_null", False)), nested])
    return described


def list_format(serializer_class) -> str:
    """The list's format: a digest of LIST_FORMAT and of the list serializer's fields."""
    shape = json.dumps([LIST_FORMAT, _describe(serializer_class())], separators=(",", ":"))
    return hashlib.blake2b(shape.encode(), digest_size=6).hexdigest()


def caller_key(principal: Principal, scope: str) -> str:
    """Everything besides the data that a list answer depends on."""
    user = principal.user
    return "|".join((
        str(user.pk), user.role, principal.kind, str(principal.api_key_id or ""),
        str(principal.workspace_id or ""), ",".join(sorted(principal.scopes)), principal.issuer_role or "", scope,
    ))


def list_etag(version: int, key: str, format_: str) -> str:
    digest = hashlib.blake2b(f"{format_}|{version}|{key}".encode(), digest_size=12).hexdigest()
    return f'"{digest}"'


def etag_matches(if_none_match: str, etag: str) -> bool:
    """If-None-Match's weak comparison (RFC 9110 13.1.2): W/ ignored, `*` matches anything.
    gzip turns the ETag weak (W/"..."), so clients send back either form."""
    if not if_none_match:
        return False
    if if_none_match.strip() == "*":
        return True
    wanted = etag.removeprefix("W/")
    return any(tag.strip().removeprefix("W/") == wanted for tag in if_none_match.split(","))


def cacheable() -> bool:
    return settings.AGENT_LIST_CACHE_MB > 0 and not connection.in_atomic_block


def cached_body(key: str, etag: str) -> bytes | None:
    entry = _bodies.get(key)
    if entry is None or entry[0] != etag or not cacheable():
        return None
    _bodies.move_to_end(key)
    return entry[1]


def gzipped_body(key: str, etag: str, body: bytes) -> bytes:
    """The body gzipped (fleet.api.gzip's level, no file name), compressed once per cached body."""
    entry = _bodies.get(key)
    if entry is not None and entry[0] == etag and entry[2] is not None:
        return entry[2]
    compressed = compress(body)
    if entry is not None and entry[0] == etag and cacheable():
        global _cached_bytes
        entry[2] = compressed
        _cached_bytes += len(compressed)
    return compressed


def remember_body(key: str, etag: str, body: bytes) -> None:
    """Keep the body (replacing the caller's older one), the least recently used ones going first
    once AGENT_LIST_CACHE_MB is reached."""
    global _cached_bytes
    if not cacheable():
        return
    limit = settings.AGENT_LIST_CACHE_MB * 1024 * 1024
    if len(body) > limit:
        return
    old = _bodies.pop(key, None)
    if old is not None:
        _cached_bytes -= _size(old)
    while _bodies and _cached_bytes + len(body) > limit:
        _cached_bytes -= _size(_bodies.popitem(last=False)[1])
    _bodies[key] = [etag, body, None]
    _cached_bytes += len(body)


def _size(entry: list) -> int:
    return len(entry[1]) + len(entry[2] or b"")


def forget_bodies() -> None:
    global _cached_bytes
    _bodies.clear()
    _cached_bytes = 0
