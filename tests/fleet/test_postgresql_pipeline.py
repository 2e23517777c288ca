"""fleet.postgresql.pipeline.one_round_trip: statements in one transaction and one round trip,
committed together, rolled back together, a savepoint inside a caller's transaction."""

from __future__ import annotations

import pytest
from django.db import DataError, connection, transaction

from fleet.postgresql.pipeline import one_round_trip

pytestmark = pytest.mark.django_db(transaction=True)


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


def test_the_statements_commit_together_and_their_rows_are_there_after(table):
    with connection.cursor() as first, connection.cursor() as second:
        with one_round_trip():
            first.execute("INSERT INTO pipelined VALUES (1), (2) RETURNING n")
            second.execute("SELECT count(*) FROM pipelined")
        assert sorted(n for (n,) in first.fetchall()) == [1, 2]
        assert second.fetchone() == (2,)
    assert _idle()
    assert _stored() == [1, 2]


def test_a_failing_statement_rolls_back_the_ones_before_it_and_leaves_the_connection_usable(table):
    with connection.cursor() as cursor, pytest.raises(DataError), one_round_trip():
        cursor.execute("INSERT INTO pipelined VALUES (1)")
        cursor.execute("SELECT 1 / 0")
        cursor.execute("INSERT INTO pipelined VALUES (2)")

    assert _idle()
    assert _stored() == []


def test_inside_a_transaction_it_is_a_savepoint_of_it(table):
    with transaction.atomic():
        with connection.cursor() as cursor, one_round_trip():
            cursor.execute("INSERT INTO pipelined VALUES (1)")
        assert _stored() == [1]
        transaction.set_rollback(True)

    assert _stored() == []
