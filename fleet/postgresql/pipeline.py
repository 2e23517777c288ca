"""Statements in one transaction, sent to PostgreSQL in one write and answered in one read: for a
hot path whose statements do not need each other's results in Python.

    read_rows, lock_rows, rows = in_one_write([(sql, params), (sql, params), (sql, params)])

psycopg's pipeline mode sends each statement as it is executed, so the server wakes up for each
one, and on these machines a wake-up after idle costs more than the statement itself
(docs/performance.md). Here libpq's pipeline is driven directly: BEGIN, each statement (prepared
once per connection, named by its text and its parameters' types), COMMIT and the sync are
buffered and flushed together, then every result is read. Parameters and rows are adapted by
psycopg's own Transformer with the connection's adapters (Django's included), as a cursor would.
One statement alone goes without BEGIN and COMMIT (autocommit).

Statements use Django's placeholders (`%s`, and `%%` for a percent sign) and bind on the server,
as in fleet.postgresql.prepared. Inside a caller's transaction (Django's atomic, a test's) and on
another database they run through a cursor (several: in a savepoint). A statement that fails
makes the server skip the ones after it: the transaction is rolled back and the error raised as
Django's (IntegrityError, DataError, ...).
"""

from __future__ import annotations

import hashlib
import logging
import re
import select
import time
from contextlib import nullcontext
from functools import lru_cache
from weakref import WeakKeyDictionary

from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from psycopg import errors, pq
from psycopg.adapt import PyFormat, Transformer

from .base import sql_with_values
from .prepared import prepared_statements

Statement = tuple[str, list]

sql_logger = logging.getLogger("django.db.backends")

_PLACEHOLDER = re.compile(r"%(s|%)")
# The statements prepared on each psycopg connection, by name (a new connection starts empty).
_prepared: WeakKeyDictionary = WeakKeyDictionary()
# Hot statements are few and of fixed text; past this many on one connection they are all
# deallocated and prepared again as they come (a bound on what the server keeps per connection).
MAX_PREPARED = 256
_OK = (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK)


def in_one_write(statements: list[Statement]) -> list[list[tuple]]:
    """The rows of each statement (empty for one that returns none), in order."""
    db = connections[DEFAULT_DB_ALIAS]  # once: each access through `connection` looks it up again
    if db.vendor != "postgresql" or db.in_atomic_block or not db.get_autocommit():
        return _through_a_cursor(statements)
    # What Django's cursor() does first: a connection idle too long is checked (fleet.postgresql.base).
    db.close_if_health_check_failed()
    db.ensure_connection()
    started = time.monotonic()
    with db.wrap_database_errors:
        try:
            return _pipelined(db, statements)
        finally:
            if db.queries_logged:
                _log(db, statements, time.monotonic() - started)


def _log(db, statements: list[Statement], duration: float) -> None:
    """In Django's query log (DEBUG, CaptureQueriesContext) and its SQL logger, as its cursor
    logs, the time being the whole write's."""
    for sql, params in statements:
        shown = sql_with_values(db.ops, sql, params)
        db.queries_log.append({"sql": shown, "time": f"{duration:.3f}"})
        sql_logger.debug("(%.3f) %s; args=%s; alias=%s", duration, shown, params, db.alias,
                         extra={"duration": duration, "sql": shown, "params": params, "alias": db.alias})


def _through_a_cursor(statements: list[Statement]) -> list[list[tuple]]:
    together = transaction.atomic() if len(statements) > 1 else nullcontext()
    with together, prepared_statements(), connection.cursor() as cursor:
        found = []
        for sql, params in statements:
            cursor.execute(sql, params)
            found.append(cursor.fetchall() if cursor.description else [])
        return found


@lru_cache(maxsize=512)
def _numbered(sql: str) -> bytes:
    """Django's placeholders as PostgreSQL's ($1, $2, ...)."""
    count = 0

    def number(match: re.Match) -> str:
        nonlocal count
        if match.group(1) == "%":
            return "%"
        count += 1
        return f"${count}"

    return _PLACEHOLDER.sub(number, sql).encode()


def _pipelined(db, statements: list[Statement]) -> list[list[tuple]]:
    raw = db.connection
    transformer = Transformer(raw)
    bound = []  # (name, query, values, types, formats): adapted before anything is sent
    for sql, params in statements:
        values = transformer.dump_sequence(params, [PyFormat.AUTO] * len(params))
        types, formats = tuple(transformer.types or ()), list(transformer.formats or ())
        query = _numbered(sql)
        name = b"fleet_" + hashlib.blake2b(query + repr(types).encode(), digest_size=12).hexdigest().encode()
        bound.append((name, query, values, types, formats))
    prepared = _prepared.setdefault(raw, set())
    if len(prepared) >= MAX_PREPARED:
        _deallocate(raw, prepared)
    framed = len(statements) > 1
    pg = raw.pgconn
    expected = []  # what each result answers: "frame", ("prepare", name) or "rows"
    pg.enter_pipeline_mode()
    try:
        if framed:
            pg.send_query_params(b"BEGIN", None)
            expected.append("frame")
        for name, query, values, types, formats in bound:
            if name not in prepared:
                pg.send_prepare(name, query, param_types=types)
                expected.append(("prepare", name))
            pg.send_query_prepared(name, values, param_formats=formats)
            expected.append("rows")
        if framed:
            pg.send_query_params(b"COMMIT", None)
            expected.append("frame")
        pg.pipeline_sync()
        _flush(pg)
        results = _results_to_sync(pg)
    except BaseException:
        db.close()  # a pipeline left half read cannot be used again
        raise
    pg.exit_pipeline_mode()
    return _rows(raw, transformer, prepared, expected, results)


def _rows(raw, transformer, prepared: set, expected: list, results: list) -> list[list[tuple]]:
    found, failure = [], None
    for answer, result in zip(expected, results, strict=True):
        if result.status == pq.ExecStatus.FATAL_ERROR and failure is None:
            failure = errors.error_from_result(result, encoding=raw.info.encoding)
        if answer == "rows":
            transformer.set_pgresult(result)
            answered = result.status == pq.ExecStatus.TUPLES_OK
            found.append(transformer.load_rows(0, result.ntuples, tuple) if answered else [])
        elif answer != "frame" and result.status in _OK:
            prepared.add(answer[1])
    if failure is not None:
        if raw.info.transaction_status != pq.TransactionStatus.IDLE:
            raw.execute("ROLLBACK")
        raise failure
    return found


def _deallocate(raw, prepared: set) -> None:
    with raw.pipeline():
        for name in prepared:
            raw.execute(f'DEALLOCATE "{name.decode()}"')
    prepared.clear()


def _flush(pg) -> None:
    while pg.flush():
        select.select([], [pg.socket], [])


def _results_to_sync(pg) -> list:
    """Every result up to the sync (a statement skipped after a failure answers PIPELINE_ABORTED)."""
    results = []
    while True:
        while pg.is_busy():
            select.select([pg.socket], [], [])
            pg.consume_input()
        result = pg.get_result()
        if result is None:  # the end of one statement's results
            continue
        if result.status == pq.ExecStatus.PIPELINE_SYNC:
            return results
        results.append(result)
