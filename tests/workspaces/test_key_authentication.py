"""Workspace API keys as credentials: headers, conflicts, revocation, issuer, workspace binding."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.tokens import session_token_issue
from tests.factories.workspaces import WorkspaceFactory, make_api_key, make_member
from tests.support import client_for
from workspaces.keys import principal_from_api_key
from workspaces.models import ApiKey, Membership
from workspaces.roles import Role

pytestmark = pytest.mark.django_db


@pytest.fixture
def workspace():
    return WorkspaceFactory()


@pytest.fixture
def key(workspace):
    return make_api_key(workspace=workspace, scopes=["workspaces:read"])


@pytest.mark.parametrize("header", ["X-Api-Key", "X-Service-Api-Key"])
def test_a_key_is_accepted_in_either_header(workspace, key, header):
    response = client_for(api_key=key[1], header=header).get("/api/workspaces")

    assert response.status_code == 200
    assert [row["id"] for row in response.json()] == [str(workspace.id)]


def test_the_same_key_in_both_headers_is_accepted(key):
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=key[1], HTTP_X_SERVICE_API_KEY=key[1])

    assert client.get("/api/workspaces").status_code == 200


def test_two_different_keys_are_a_conflict(workspace, key):
    _, other = make_api_key(workspace=workspace, scopes=["workspaces:read"])
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=key[1], HTTP_X_SERVICE_API_KEY=other)

    response = client.get("/api/workspaces")

    assert response.status_code == 400
    assert response.json()["code"] == "conflicting_auth"


@pytest.mark.parametrize("header", ["HTTP_X_API_KEY", "HTTP_X_SERVICE_API_KEY"])
def test_a_key_with_a_bearer_token_is_a_conflict(workspace, key, header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {session_token_issue(user=workspace.owner)}", **{header: key[1]})

    response = client.get("/api/workspaces")

    assert response.status_code == 400
    assert response.json()["code"] == "conflicting_auth"


def test_a_key_beats_the_session_cookie(workspace, key):
    other = WorkspaceFactory(owner=workspace.owner)
    client = client_for(api_key=key[1])
    client.cookies["service_auth"] = session_token_issue(user=workspace.owner)

    rows = client.get("/api/workspaces").json()

    assert [row["id"] for row in rows] == [str(workspace.id)]
    assert str(other.id) not in {row["id"] for row in rows}


def test_no_credential_answers_401_not_authenticated(workspace):
    for path in ("/api/workspaces", f"/api/workspaces/{workspace.id}/members"):
        response = APIClient().get(path)
        assert response.status_code == 401
        assert response.json()["code"] == "not_authenticated"


@pytest.mark.parametrize("raw", ["fk_not-a-real-key", "sk_something", "fk_" + "a" * 300])
def test_an_unknown_key_answers_401(raw):
    response = client_for(api_key=raw).get("/api/workspaces")

    assert response.status_code == 401
    assert response.json()["code"] == "invalid_credentials"


def test_a_revoked_key_answers_401(key):
    ApiKey.objects.filter(pk=key[0].pk).update(revoked_at=timezone.now())

    response = client_for(api_key=key[1]).get("/api/workspaces")

    assert response.status_code == 401
    assert response.json()["code"] == "invalid_credentials"


def test_a_key_whose_issuer_left_answers_401(workspace):
    admin = make_member(workspace, Role.ADMIN)
    _, raw = make_api_key(workspace=workspace, created_by=admin, scopes=["workspaces:read"])
    Membership.objects.filter(workspace=workspace, user=admin).delete()  # left by any path

    response = client_for(api_key=raw).get("/api/workspaces")

    assert response.status_code == 401
    assert response.json()["code"] == "invalid_credentials"


def test_a_key_whose_issuer_was_deactivated_answers_401(workspace, key):
    workspace.owner.is_active = False
    workspace.owner.save(update_fields=["is_active"])

    assert client_for(api_key=key[1]).get("/api/workspaces").status_code == 401


def test_a_key_of_a_deleted_workspace_answers_401(workspace, key):
    workspace.delete()

    assert client_for(api_key=key[1]).get("/api/workspaces").status_code == 401


def test_a_key_used_against_another_workspace_answers_403_wrong_workspace(workspace, key):
    other = WorkspaceFactory(owner=workspace.owner)
    keyed = client_for(api_key=key[1])

    for path in (f"/api/workspaces/{other.id}", f"/api/workspaces/{other.id}/members"):
        response = keyed.get(path)
        assert response.status_code == 403, path
        assert response.json()["code"] == "wrong_workspace"


def test_a_key_on_a_session_only_route_of_another_workspace_answers_session_required(workspace, key):
    other = WorkspaceFactory(owner=workspace.owner)
    keyed = client_for(api_key=key[1])

    responses = [
        keyed.delete(f"/api/workspaces/{other.id}"),
        keyed.post(f"/api/workspaces/{other.id}/members", {"email": "a@example.com", "role": "viewer"}, format="json"),
        keyed.get(f"/api/workspaces/{other.id}/api-keys"),
    ]

    assert [(r.status_code, r.json()["code"]) for r in responses] == [(403, "session_required")] * 3


def test_a_key_used_against_a_workspace_that_does_not_exist_answers_404(key):
    response = client_for(api_key=key[1]).get(f"/api/workspaces/{uuid.uuid4()}/members")

    assert response.status_code == 404


def test_using_a_key_records_last_used_at_at_most_once_a_minute(key):
    keyed = client_for(api_key=key[1])
    keyed.get("/api/workspaces")
    first = ApiKey.objects.get(pk=key[0].pk).last_used_at
    keyed.get("/api/workspaces")
    assert ApiKey.objects.get(pk=key[0].pk).last_used_at == first

    ApiKey.objects.filter(pk=key[0].pk).update(last_used_at=first - timedelta(minutes=5))
    keyed.get("/api/workspaces")

    assert ApiKey.objects.get(pk=key[0].pk).last_used_at > first - timedelta(minutes=5)


@pytest.mark.parametrize(
    ("issuer_role", "expected"),
    [
        (Role.OWNER, {"agents:read", "agents:write", "workspaces:read"}),
        (Role.ADMIN, {"agents:read", "agents:write", "workspaces:read"}),
        (Role.EDITOR, {"agents:read", "agents:write", "workspaces:read"}),
        (Role.VIEWER, {"agents:read", "workspaces:read"}),
    ],
)
def test_a_keys_scopes_are_capped_by_its_issuers_current_role(workspace, issuer_role, expected):
    issuer = workspace.owner if issuer_role is Role.OWNER else make_member(workspace, issuer_role)
    _, raw = make_api_key(
        workspace=workspace, created_by=issuer, scopes=["agents:read", "agents:write", "workspaces:read"]
    )

    principal = principal_from_api_key(raw)

    assert principal.is_api_key and not principal.is_platform_admin
    assert principal.workspace_id == workspace.id
    assert principal.user == issuer
    assert set(principal.scopes) == expected
