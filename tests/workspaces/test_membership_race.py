"""Concurrent invitations and acceptances (real PostgreSQL): one invitation per address, one
membership per user; a loser gets 404 (the invitation is used up) or 409 (already a member)."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction

from tests.factories.accounts import UserFactory
from tests.factories.workspaces import WorkspaceFactory
from tests.support import client_for, in_thread, need_service, run_in_threads
from workspaces.models import Invitation, Membership
from workspaces.roles import Role
from workspaces.services import invitation_create

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _postgres_only():
    need_service(connection.vendor == "postgresql", "the membership race needs PostgreSQL row locking")


def _invite(workspace, email):
    return lambda: client_for(workspace.owner).post(
        f"/api/workspaces/{workspace.id}/members", {"email": email, "role": "viewer"}, format="json"
    ).status_code


def _accept(user, invitation):
    return lambda: client_for(user).post(f"/api/invitations/{invitation.id}/accept").status_code


def _invitation(workspace, user, role=Role.VIEWER):
    return invitation_create(workspace=workspace, invited_by=workspace.owner, acting_role=Role.OWNER,
                             email=user.email, role=role)


def test_two_simultaneous_invitations_of_one_address_leave_one():
    workspace = WorkspaceFactory()
    for round_number in range(5):
        email = f"newcomer{round_number}@example.com"

        statuses = run_in_threads(_invite(workspace, email), _invite(workspace, email), timeout=30)

        assert statuses == [202, 202], (round_number, statuses)
        assert Invitation.objects.filter(workspace=workspace, email=email).count() == 1


def test_two_simultaneous_acceptances_leave_one_membership():
    workspace = WorkspaceFactory()
    for round_number in range(5):
        newcomer = UserFactory()
        invitation = _invitation(workspace, newcomer)

        statuses = run_in_threads(_accept(newcomer, invitation), _accept(newcomer, invitation), timeout=30)

        assert sorted(statuses) == [200, 404], (round_number, statuses)
        assert Membership.objects.filter(workspace=workspace, user=newcomer).count() == 1


def _wait_for_lock_waiter(timeout: float = 10.0) -> None:
    """Until some other session of this database waits on a lock (the blocked INSERT)."""
    deadline = time.monotonic() + timeout
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
            )
            if cursor.fetchone()[0]:
                return
            time.sleep(0.02)
    raise AssertionError("the acceptance never blocked on the unique index")


def test_an_acceptance_that_loses_the_race_after_its_check_answers_409():
    """Force the narrow window: the membership is inserted but not yet committed when the
    acceptance checks, so its INSERT waits on the unique index and then fails."""
    workspace = WorkspaceFactory()
    newcomer = UserFactory()
    invitation = _invitation(workspace, newcomer)
    inserted, release = threading.Event(), threading.Event()

    def hold_an_uncommitted_membership():
        with transaction.atomic():
            # A raw row on purpose: the race needs an insert left uncommitted, which no service does.
            Membership.objects.create(workspace=workspace, user=newcomer, role="editor")
            inserted.set()
            release.wait(timeout=30)
        return "committed"

    holder = in_thread(hold_an_uncommitted_membership)
    assert inserted.wait(timeout=10)
    request = in_thread(_accept(newcomer, invitation))
    _wait_for_lock_waiter()
    release.set()

    assert holder.result(timeout=30) == "committed"
    assert request.result(timeout=30) == 409
    assert list(Membership.objects.filter(workspace=workspace, user=newcomer).values_list("role", flat=True)) == [
        "editor"
    ]
    assert Invitation.objects.filter(pk=invitation.pk).exists()  # the refused acceptance changed nothing
