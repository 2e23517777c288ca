"""No change without its row, no row without its change: the API write and its audit row commit
together or not at all (real commits: transaction=True)."""

import pytest
from django.db import DatabaseError

from audit import requests as audit_requests
from audit.models import AuditEntry
from tests.support import client_for
from workspaces.models import Membership

pytestmark = pytest.mark.django_db(transaction=True)


def promote(tenancy):
    client = client_for(tenancy.admin)
    client.raise_request_exception = False  # answered as ApiErrorMiddleware answers: a 500 body
    return client.patch(f"/api/workspaces/{tenancy.workspace.id}/members/{tenancy.viewer.id}", {"role": "editor"},
                        format="json")


def viewer_role(tenancy) -> str:
    return Membership.objects.get(workspace=tenancy.workspace, user=tenancy.viewer).role


def test_a_failure_after_the_row_was_written_undoes_the_change_and_the_row(tenancy, monkeypatch):
    real = audit_requests.audit_record

    def write_then_fail(**fields):
        real(**fields)
        assert AuditEntry.objects.count() == 1  # the row was written...
        raise RuntimeError("injected after the audit insert")

    monkeypatch.setattr(audit_requests, "audit_record", write_then_fail)

    response = promote(tenancy)

    assert response.status_code == 500 and response.json()["code"] == "server_error"
    assert viewer_role(tenancy) == "viewer"  # ...and left with the change
    assert not AuditEntry.objects.exists()


def test_an_audit_insert_that_fails_undoes_the_change(tenancy, monkeypatch):
    def refuse(self, *args, **kwargs):
        raise DatabaseError("injected: the audit insert failed")

    monkeypatch.setattr(AuditEntry, "save", refuse)

    response = promote(tenancy)

    assert response.status_code >= 500
    assert viewer_role(tenancy) == "viewer"
    assert not AuditEntry.objects.exists()


def test_without_a_failure_both_commit(tenancy):
    assert promote(tenancy).status_code == 200

    assert viewer_role(tenancy) == "editor"
    assert AuditEntry.objects.get().action == "workspace.member.update"
