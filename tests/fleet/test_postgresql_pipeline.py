"""fleet.postgresql.pipeline.in_one_write: statements in one transaction sent in one write,
committed together, rolled back together, a savepoint inside a caller's transaction, each
statement prepared once per connection, values adapted as a cursor adapts them."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from django.db import DataError, connection, transaction
from django.test.utils import CaptureQueriesContext

from fleet.postgresql.pipeline import in_one_write

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's pipeline")]


@pytest.fixture
def table():
    with connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE pipelined (n integer NOT NULL)")
    yield
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE pipelined")


def _stored() -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT n FROM pipelined ORDER BY n")
        return [n for (n,) in cursor.fetchall()]


def _idle() -> bool:
    return connection.connection.info.transaction_status == 0


def _prepared_here() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE name LIKE 'fleet\\_%%' ORDER BY statement")
        return [statement for (statement,) in cursor.fetchall()]


def test_the_statements_commit_together_and_each_answers_its_rows(table):
    inserted, counted, nothing = in_one_write([("INSERT INTO pipelined VALUES (%s), (%s) RETURNING n", [1, 2]),
                                               ("SELECT count(*) FROM pipelined", []),
                                               ("INSERT INTO pipelined VALUES (%s)", [3])])

    assert sorted(inserted) == [(1,), (2,)]
    assert counted == [(2,)]
    assert nothing == []
    assert _idle()
    assert _stored() == [1, 2, 3]


def test_a_failing_statement_rolls_back_the_ones_before_it_and_leaves_the_connection_usable(table):
    with pytest.raises(DataError):
        in_one_write([("INSERT INTO pipelined VALUES (%s)", [1]), ("SELECT 1 / %s", [0]),
                      ("INSERT INTO pipelined VALUES (%s)", [2])])

    assert _idle()
    assert _stored() == []
    # What was prepared before the failure stays prepared (a statement is not rolled back).
    assert in_one_write([("INSERT INTO pipelined VALUES (%s)", [4]), ("SELECT n FROM pipelined", [])]) == [[], [(4,)]]


def test_inside_a_transaction_it_is_a_savepoint_of_it(table):
    with transaction.atomic():
        assert in_one_write([("INSERT INTO pipelined VALUES (%s) RETURNING n", [1])]) == [[(1,)]]
        assert _stored() == [1]
        transaction.set_rollback(True)

    assert _stored() == []


def test_a_statement_is_prepared_once_per_connection_and_again_on_a_new_one():
    connection.close()  # a connection of this test's own: nothing prepared on it yet
    statement = ("SELECT %s::integer + 1", [1])
    assert in_one_write([statement]) == [[(2,)]]
    assert in_one_write([("SELECT %s::integer + 1", [41])]) == [[(42,)]]
    assert _prepared_here() == ["SELECT $1::integer + 1"]

    connection.close()
    assert in_one_write([statement]) == [[(2,)]]
    assert _prepared_here() == ["SELECT $1::integer + 1"]


def test_past_the_bound_a_connections_statements_are_deallocated_and_prepared_again(monkeypatch):
    monkeypatch.setattr("fleet.postgresql.pipeline.MAX_PREPARED", 2)
    connection.close()
    for n in range(3):
        assert in_one_write([(f"SELECT %s::integer + {n}", [1])]) == [[(1 + n,)]]

    assert _prepared_here() == ["SELECT $1::integer + 2"]
    assert in_one_write([("SELECT %s::integer + 0", [1])]) == [[(1,)]]
    assert _prepared_here() == ["SELECT $1::integer + 0", "SELECT $1::integer + 2"]


def test_values_go_and_come_back_as_a_cursor_adapts_them():
    some_id, moment = uuid.uuid4(), datetime(2026, 11, 29, 10, 30, tzinfo=UTC)
    sql = "SELECT %s::uuid, %s::timestamptz, %s::bigint * 2, %s::text IS NULL, 'a%%' || %s"

    small = in_one_write([(sql, [some_id, moment, 5, None, "b"])])
    # A value of another size is dumped as another type: a statement of its own, not a wrong one.
    large = in_one_write([(sql, [some_id, moment, 2**40, None, "b"])])

    assert small == [[(some_id, moment, 10, True, "a%b")]]
    assert large == [[(some_id, moment, 2**41, True, "a%b")]]


def test_the_statements_are_in_djangos_query_log_with_their_values():
    with CaptureQueriesContext(connection) as log:
        in_one_write([("SELECT %s::integer", [7]), ("SELECT %s::text", ["seven"])])

    assert [query["sql"] for query in log.captured_queries] == ["SELECT 7::integer", "SELECT 'seven'::text"]
