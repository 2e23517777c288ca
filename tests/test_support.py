"""The shared test vocabulary does what the tests that lean on it take for granted."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, connections
from django.utils import timezone

from agents.models import Status, WorkspaceAgent
from tests.support import frozen_clock, in_thread, run_in_threads
from workspaces.keys import principal_from_api_key
from workspaces.models import Membership

MOMENT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def test_run_in_threads_gives_back_each_calls_result_in_the_calls_order():
    assert run_in_threads(lambda: "a", lambda: "b", lambda: "c") == ["a", "b", "c"]


def test_run_in_threads_releases_the_calls_together():
    # Each call waits for all the others to be running: calls run one after another would time out.
    together = threading.Barrier(3)

    assert sorted(run_in_threads(*[lambda: together.wait(timeout=5)] * 3, timeout=10)) == [0, 1, 2]


def test_an_exception_raised_in_a_thread_is_raised_in_the_test():
    def fails():
        raise ValueError("in the thread")

    with pytest.raises(ValueError, match="in the thread"):
        run_in_threads(lambda: 1, fails)


def test_with_return_exceptions_the_exception_stands_in_its_calls_place():
    error = ValueError("in the thread")

    def fails():
        raise error

    assert run_in_threads(lambda: 1, fails, return_exceptions=True) == [1, error]


@pytest.mark.django_db(transaction=True)
def test_each_thread_closes_its_own_database_connection():
    def query_and_keep_the_connection():
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return connections["default"]  # this thread's own wrapper, not the per-thread proxy

    (used,) = run_in_threads(query_and_keep_the_connection)

    assert used is not connections["default"]
    assert used.connection is None


def test_in_thread_starts_at_once_and_result_waits_for_the_end():
    started, release = threading.Event(), threading.Event()

    def call():
        started.set()
        release.wait(timeout=5)
        return "done"

    running = in_thread(call)
    assert started.wait(timeout=5)
    release.set()

    assert running.result(timeout=5) == "done"


def test_the_clock_fixture_stands_still_until_moved(clock):
    start = timezone.now()
    assert timezone.now() == start == clock.now()

    clock.advance(timedelta(minutes=5))
    assert timezone.now() == start + timedelta(minutes=5)

    clock.move_to(MOMENT)
    assert timezone.now() == MOMENT


def test_a_ticking_frozen_clock_runs_on_from_where_it_was_set():
    with frozen_clock(MOMENT, tick=True) as clock:
        first = clock.now()
        time.sleep(0.05)

        assert MOMENT <= first < clock.now() < MOMENT + timedelta(seconds=5)


@pytest.mark.django_db
def test_the_tenancy_gives_each_user_the_role_its_name_says(tenancy):
    roles = dict(Membership.objects.filter(workspace=tenancy.workspace).values_list("user_id", "role"))

    assert roles == {
        tenancy.owner.pk: "owner",
        tenancy.admin.pk: "admin",
        tenancy.editor.pk: "editor",
        tenancy.viewer.pk: "viewer",
        tenancy.agent_owner.pk: "viewer",
    }
    assert tenancy.workspace.owner == tenancy.owner
    assert tenancy.other_workspace.owner == tenancy.outsider
    assert not Membership.objects.filter(user=tenancy.platform_admin).exists()
    assert tenancy.platform_admin.role == "admin"


@pytest.mark.django_db
def test_a_tenancy_key_is_a_working_key_of_its_workspace_issued_by_its_owner(tenancy):
    principal = principal_from_api_key(tenancy.key("agents:read", "workspaces:read"))

    assert principal.workspace_id == tenancy.workspace.pk
    assert principal.user == tenancy.owner
    assert principal.scopes == frozenset({"agents:read", "workspaces:read"})


@pytest.mark.django_db
def test_a_tenancy_agent_is_the_agent_owners_stopped_and_assigned_to_the_workspace(tenancy):
    agent = tenancy.agent()

    assert (agent.owner, agent.status, agent.container_id) == (tenancy.agent_owner, Status.STOPPED, "")
    assert WorkspaceAgent.objects.filter(workspace=tenancy.workspace, agent=agent, role="member").exists()
