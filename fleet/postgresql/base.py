"""Django's PostgreSQL backend, with CONN_HEALTH_CHECKS paid only when it can find something.

Django's health check runs `SELECT 1` at the first query of every request on a reused
connection: a round trip per request (a third of the wall time of GET /api/auth/me under load).
A connection that served a request without error less than DB_HEALTH_CHECK_IDLE_SECONDS ago
is taken as alive; one idle longer (a database restarted overnight, a proxy's idle timeout) is
still checked, and a failed check still opens a new connection. A connection that breaks in
mid-traffic fails the one request that finds it, as it would between the check and the query,
and is closed at that request's end (Django closes a connection whose errors left it unusable).
"""

from __future__ import annotations

import time

from django.conf import settings
from django.db.backends.postgresql import base, operations


class DatabaseOperations(operations.DatabaseOperations):
    def last_executed_query(self, cursor, sql, params):
        """The SQL with its values, for the query log, also for a prepared statement (executed
        by name, so psycopg keeps no text of it: fleet.postgresql.prepared)."""
        query = super().last_executed_query(cursor, sql, params)
        if query is None and sql is not None:
            return sql_with_values(self, sql, params)
        return query


def sql_with_values(ops, sql: str, params) -> str:
    """The SQL with its values quoted in, for the query log; a value the client cannot quote:
    the SQL with its placeholders."""
    try:
        return ops.compose_sql(sql, params)
    except Exception:
        return sql


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations
    _used_without_error_at = float("-inf")

    def close_if_health_check_failed(self):
        if (
            self.connection is not None
            and self.health_check_enabled
            and not self.health_check_done
            and time.monotonic() - self._used_without_error_at < settings.DB_HEALTH_CHECK_IDLE_SECONDS
        ):
            self.health_check_done = True
            return
        super().close_if_health_check_failed()

    def close_if_unusable_or_obsolete(self):
        # Called when a request starts and when it ends; health_check_done says this request
        # used the connection (Django resets it below, for the next one).
        if self.connection is not None and self.health_check_done and not self.errors_occurred:
            self._used_without_error_at = time.monotonic()
        super().close_if_unusable_or_obsolete()

    def close(self):
        self._used_without_error_at = float("-inf")
        super().close()
