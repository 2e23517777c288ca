"""/api/workspaces/:id/api-keys and /api/workspaces/:id/api-keys/:keyId."""

from __future__ import annotations

import uuid
from datetime import datetime

import pytest

from tests.factories.accounts import AdminFactory
from tests.factories.workspaces import WorkspaceFactory, make_api_key, make_member
from tests.support import client_for
from workspaces.keys import api_key_digest
from workspaces.models import ApiKey
from workspaces.roles import Role

pytestmark = pytest.mark.django_db

KEY_FIELDS = {"id", "name", "scopes", "prefix", "created_by", "created_at", "last_used_at"}


@pytest.fixture
def workspace():
    return WorkspaceFactory()


def _keys_url(workspace, key=None) -> str:
    base = f"/api/workspaces/{workspace.id}/api-keys"
    return f"{base}/{key.id if hasattr(key, 'id') else key}" if key is not None else base


def test_creating_a_key_shows_the_secret_once_and_stores_only_its_digest(workspace):
    admin = make_member(workspace, Role.ADMIN)

    response = client_for(admin).post(
        _keys_url(workspace), {"name": "CI", "scopes": ["workspaces:read", "agents:read"]}, format="json"
    )

    assert response.status_code == 201
    body = response.json()
    assert set(body) == KEY_FIELDS | {"key"}
    assert body["name"] == "CI"
    assert body["scopes"] == ["agents:read", "workspaces:read"]
    assert body["created_by"] == str(admin.id)
    assert body["last_used_at"] is None
    assert datetime.fromisoformat(body["created_at"])
    assert body["key"].startswith("fk_") and len(body["key"]) == 3 + 43
    assert body["prefix"] == body["key"][:11]
    stored = ApiKey.objects.get(pk=body["id"])
    assert stored.digest == api_key_digest(body["key"])
    assert body["key"] not in {stored.digest, stored.prefix, stored.name}


def test_a_new_key_works_at_once(workspace):
    body = client_for(workspace.owner).post(
        _keys_url(workspace), {"name": "CI", "scopes": ["workspaces:read"]}, format="json"
    ).json()

    response = client_for(api_key=body["key"]).get("/api/workspaces")

    assert response.status_code == 200
    assert [row["id"] for row in response.json()] == [str(workspace.id)]
    assert ApiKey.objects.get(pk=body["id"]).last_used_at is not None


def test_repeated_scopes_are_kept_once(workspace):
    response = client_for(workspace.owner).post(
        _keys_url(workspace), {"name": "k", "scopes": ["agents:write", "agents:write"]}, format="json"
    )

    assert response.status_code == 201
    assert response.json()["scopes"] == ["agents:write"]


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"scopes": ["agents:read"]}, id="name missing"),
        pytest.param({"name": "", "scopes": ["agents:read"]}, id="name empty"),
        pytest.param({"name": "x" * 101, "scopes": ["agents:read"]}, id="name 101 characters"),
        pytest.param({"name": 7, "scopes": ["agents:read"]}, id="name not a string"),
        pytest.param({"name": "k"}, id="scopes missing"),
        pytest.param({"name": "k", "scopes": []}, id="scopes empty"),
        pytest.param({"name": "k", "scopes": "agents:read"}, id="scopes not a list"),
        pytest.param({"name": "k", "scopes": ["agents:admin"]}, id="unknown scope"),
        pytest.param({"name": "k", "scopes": ["agents:read", "root"]}, id="one unknown scope among known"),
        pytest.param({"name": "k", "scopes": [1]}, id="scope not a string"),
    ],
)
def test_a_bad_key_body_is_refused_with_400_naming_the_field(workspace, body):
    response = client_for(workspace.owner).post(_keys_url(workspace), body, format="json")

    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"
    assert set(response.json()["fields"]) & {"name", "scopes", "scopes.0"}
    assert not ApiKey.objects.exists()


def test_the_key_list_never_shows_the_secret_or_digest(workspace):
    key, raw = make_api_key(workspace=workspace, scopes=["agents:read"], name="reader")

    response = client_for(workspace.owner).get(_keys_url(workspace))

    assert response.status_code == 200
    assert [set(k) for k in response.json()] == [KEY_FIELDS]
    assert response.json()[0]["prefix"] == key.prefix
    assert raw.encode() not in response.content and key.digest.encode() not in response.content


def test_the_key_list_holds_only_this_workspaces_active_keys(workspace):
    active, _ = make_api_key(workspace=workspace, name="active")
    revoked, _ = make_api_key(workspace=workspace, name="revoked")
    ApiKey.objects.filter(pk=revoked.pk).update(revoked_at=active.created_at)
    make_api_key(workspace=WorkspaceFactory(owner=workspace.owner), name="elsewhere")

    names = [k["name"] for k in client_for(workspace.owner).get(_keys_url(workspace)).json()]

    assert names == ["active"]


def test_revoking_a_key_stops_it_at_once(workspace):
    key, raw = make_api_key(workspace=workspace, scopes=["workspaces:read"])
    keyed = client_for(api_key=raw)
    assert keyed.get("/api/workspaces").status_code == 200

    response = client_for(workspace.owner).delete(_keys_url(workspace, key))

    assert response.status_code == 200
    assert response.json() == {"success": True}
    assert ApiKey.objects.get(pk=key.pk).revoked_at is not None
    refused = keyed.get("/api/workspaces")
    assert refused.status_code == 401
    assert refused.json()["code"] == "invalid_credentials"


def test_revoking_a_key_twice_answers_404_the_second_time(workspace):
    key, _ = make_api_key(workspace=workspace)
    owner = client_for(workspace.owner)

    assert owner.delete(_keys_url(workspace, key)).status_code == 200
    assert owner.delete(_keys_url(workspace, key)).status_code == 404


def test_a_key_of_another_workspace_cannot_be_revoked_through_this_one(workspace):
    other = WorkspaceFactory(owner=workspace.owner)
    key, _ = make_api_key(workspace=other)

    response = client_for(workspace.owner).delete(_keys_url(workspace, key))

    assert response.status_code == 404
    assert ApiKey.objects.get(pk=key.pk).revoked_at is None


def test_revoking_an_unknown_key_answers_404(workspace):
    response = client_for(workspace.owner).delete(_keys_url(workspace, uuid.uuid4()))

    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


def test_a_platform_admin_member_may_issue_keys(workspace):
    admin = make_member(workspace, Role.VIEWER, user=AdminFactory())

    response = client_for(admin).post(_keys_url(workspace), {"name": "ops", "scopes": ["agents:read"]}, format="json")

    assert response.status_code == 201


def test_a_key_may_not_manage_keys_even_of_its_own_workspace(workspace):
    key, raw = make_api_key(workspace=workspace, scopes=["agents:write", "agents:read", "workspaces:read"])
    keyed = client_for(api_key=raw)

    for response in (
        keyed.get(_keys_url(workspace)),
        keyed.post(_keys_url(workspace), {"name": "x", "scopes": ["agents:read"]}, format="json"),
        keyed.delete(_keys_url(workspace, key)),
    ):
        assert response.status_code == 403
        assert response.json()["code"] == "session_required"
    assert ApiKey.objects.filter(workspace=workspace).count() == 1
