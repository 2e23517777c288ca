"""fleet.postgresql: the health check paid only after idleness, and prepared statements."""

from __future__ import annotations

import contextlib
import time

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

import agents.selectors
from fleet.api.principal import Principal
from fleet.postgresql.prepared import prepared_statements

pytestmark = pytest.mark.django_db


@pytest.fixture
def health_checks(monkeypatch):
    """Count is_usable() calls (the SELECT 1 of CONN_HEALTH_CHECKS)."""
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL backend")
    calls = []
    wrapper = connections["default"]
    original = type(wrapper).is_usable
    monkeypatch.setattr(type(wrapper), "is_usable", lambda self: calls.append(1) or original(self))
    monkeypatch.setattr(wrapper, "health_check_enabled", True)
    return calls


def _first_query_of_a_request(used_seconds_ago: float) -> None:
    wrapper = connections["default"]
    wrapper.ensure_connection()
    wrapper._used_without_error_at = time.monotonic() - used_seconds_ago
    wrapper.health_check_done = False  # what the start of a request leaves
    wrapper.close_if_health_check_failed()  # what the request's first cursor does
    assert wrapper.health_check_done


def test_a_connection_used_moments_ago_is_not_checked_again(health_checks, settings):
    settings.DB_HEALTH_CHECK_IDLE_SECONDS = 10
    _first_query_of_a_request(used_seconds_ago=1)

    assert health_checks == []


def test_a_connection_idle_longer_than_the_setting_is_checked(health_checks, settings):
    settings.DB_HEALTH_CHECK_IDLE_SECONDS = 10
    _first_query_of_a_request(used_seconds_ago=11)

    assert health_checks == [1]


@pytest.mark.django_db(transaction=True)  # autocommit, as between requests
def test_a_request_that_used_the_connection_without_error_stamps_it(health_checks):
    wrapper = connections["default"]
    wrapper.ensure_connection()
    wrapper._used_without_error_at = float("-inf")
    wrapper.health_check_done = True  # this request used it
    before = time.monotonic()

    wrapper.close_if_unusable_or_obsolete()  # what the end of the request does

    assert wrapper._used_without_error_at >= before


def test_the_list_is_prepared_once_and_reads_the_same_rows(tenancy, monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL backend")
    tenancy.agent()
    tenancy.agent(owner=tenancy.editor)
    principal = Principal(user=tenancy.editor)
    prepared = agents.selectors.agent_list(principal)
    with CaptureQueriesContext(connection) as log:
        agents.selectors.agent_list(principal)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements")
        statements = cursor.fetchone()[0]
    monkeypatch.setattr(agents.selectors, "prepared_statements", contextlib.nullcontext)

    assert agents.selectors.agent_list(principal) == prepared
    assert statements >= 3
    # The log shows the values: the caller's id, or the workspaces of its memberships.
    shown = (tenancy.editor.pk.hex, tenancy.workspace.pk.hex)
    assert all(any(value in q["sql"] for value in shown) for q in log.captured_queries)


def test_outside_the_block_the_connection_binds_on_the_client_again():
    with prepared_statements():
        pass
    assert connection.connection.prepare_threshold is None
    assert connection.connection.cursor_factory.__name__ == "Cursor"
