"""Statements in one transaction and one round trip (psycopg's pipeline mode), for a hot path
whose statements do not need each other's results in Python.

    with one_round_trip():
        first.execute(...)
        second.execute(...)
    rows = second.fetchall()  # every result is in once the block has ended

Outside a transaction the block is BEGIN, the statements and COMMIT, sent together; the
connection stays in autocommit mode for Django throughout (turning it off and on would make
psycopg wait for the pipeline's results each time: two waits more). Inside a caller's
transaction (Django's atomic, a test's) it is a savepoint of it. A statement that fails makes
the server skip the ones after it, COMMIT with them: the transaction is rolled back, and the
error is raised as Django's (IntegrityError, OperationalError, ...) when the block ends.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection, transaction
from psycopg import pq


@contextmanager
def one_round_trip() -> Iterator[None]:
    connection.ensure_connection()
    raw = connection.connection
    if connection.in_atomic_block:
        with transaction.atomic(), connection.wrap_database_errors, raw.pipeline():
            yield
        return
    try:
        with connection.wrap_database_errors, raw.pipeline():
            raw.execute("BEGIN")
            yield
            raw.execute("COMMIT")
    except BaseException:
        if raw.info.transaction_status != pq.TransactionStatus.IDLE:
            raw.execute("ROLLBACK")
        raise
