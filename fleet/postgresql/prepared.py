"""Prepared statements for a hot read (GET /agents).

Django binds parameters on the client (the values are written into the SQL text) and turns
psycopg's prepared statements off, so PostgreSQL parses and plans every statement again. Inside
`prepared_statements()` the connection binds on the server and prepares each statement at its
first execution; the next executions of the same SQL text on that connection reuse its plan.
Only for queries whose text depends on nothing but their shape: parameters carry every value.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection


@contextmanager
def prepared_statements() -> Iterator[None]:
    if connection.vendor != "postgresql":
        yield
        return
    from django.db.backends.postgresql.base import ServerBindingCursor  # psycopg: on PostgreSQL only

    connection.ensure_connection()
    raw = connection.connection
    factory, threshold = raw.cursor_factory, raw.prepare_threshold
    raw.cursor_factory, raw.prepare_threshold = ServerBindingCursor, 0
    try:
        yield
    finally:
        raw.cursor_factory, raw.prepare_threshold = factory, threshold
