"""Each API write leaves one audit row: the route's action, its target, the result, the body's
field names (never values). The matrix of representative actions lives in test_matrix.py."""

import pytest

from audit.models import AuditEntry
from tests.support import client_for

pytestmark = pytest.mark.django_db


def only_row() -> AuditEntry:
    rows = list(AuditEntry.objects.all())
    assert len(rows) == 1, [(r.action, r.result) for r in rows]
    return rows[0]


def member_url(tenancy, user) -> str:
    return f"/api/workspaces/{tenancy.workspace.id}/members/{user.id}"


def test_a_role_change_leaves_one_row_naming_the_field_not_its_value(tenancy):
    response = client_for(tenancy.admin).patch(member_url(tenancy, tenancy.viewer), {"role": "editor"}, format="json")

    assert response.status_code == 200, response.json()
    row = only_row()
    assert (row.action, row.target_type, row.target_id, row.result) == (
        "workspace.member.update", "workspace-member", str(tenancy.viewer.id), "ok")
    assert row.detail == ["role"] and row.workspace_id == tenancy.workspace.id
    assert row.actor_user_id == tenancy.admin.id and row.actor_label == tenancy.admin.email
    assert row.actor_ip == "127.0.0.1" and row.source == "api"


def test_a_refused_write_is_recorded_with_its_error_code(tenancy):
    response = client_for(tenancy.viewer).patch(member_url(tenancy, tenancy.editor), {"role": "admin"}, format="json")

    assert response.status_code == 403
    row = only_row()
    assert row.result == response.json()["code"] == "permission_denied"
    assert row.actor_user_id == tenancy.viewer.id


def test_a_key_is_named_with_its_issuer(tenancy):
    response = client_for(api_key=tenancy.key("agents:read", "agents:write")).post(
        f"/api/workspaces/{tenancy.workspace.id}/api-keys", {"name": "k", "scopes": ["agents:read"]}, format="json")

    row = only_row()
    assert row.actor_key_id is not None and row.actor_user_id == tenancy.owner.id
    assert row.actor_label == f"{tenancy.owner.email} (API key)"
    assert row.workspace_id == tenancy.workspace.id and row.result == response.json().get("code", "ok")


def test_reads_write_no_row(tenancy):
    agent = tenancy.agent()

    assert client_for(tenancy.agent_owner).get(f"/api/agents/{agent.id}").status_code == 200

    assert not AuditEntry.objects.exists()


def test_a_create_names_the_new_object(tenancy):
    response = client_for(tenancy.admin).post(f"/api/workspaces/{tenancy.workspace.id}/api-keys",
                                              {"name": "ci", "scopes": ["agents:read"]}, format="json")

    assert response.status_code == 201, response.json()
    row = only_row()
    assert (row.action, row.target_type, row.target_id) == (
        "workspace.api.key.create", "workspace-api-key", response.json()["id"])
    assert response.json()["key"] not in str(list(AuditEntry.objects.values()))


def test_a_failed_login_names_the_email_tried(tenancy):
    response = client_for().post("/api/auth/login", {"email": tenancy.viewer.email, "password": "wrong-password"},
                                 format="json")

    assert response.status_code == 401
    row = only_row()
    assert (row.action, row.result, row.actor_label) == ("auth.login", "invalid_credentials", tenancy.viewer.email)
    assert row.actor_user_id is None and row.detail == ["email", "password"]
