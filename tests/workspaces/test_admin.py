"""Admin console: workspaces with members inline; keys by prefix and scopes, revocable, secret never shown."""

from __future__ import annotations

import pytest

from tests.factories.accounts import AdminFactory, UserFactory
from tests.factories.workspaces import WorkspaceFactory, make_api_key, make_member
from tests.support import client_for
from workspaces.models import ApiKey
from workspaces.roles import Role

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client):
    client.force_login(AdminFactory())
    return client


def test_a_workspace_page_shows_its_members_and_keys_inline_without_secrets(admin_client):
    workspace = WorkspaceFactory(name="Ops")
    editor = make_member(workspace, Role.EDITOR)
    key, raw = make_api_key(workspace=workspace, scopes=["agents:write"], name="deployer")

    page = admin_client.get(f"/admin/workspaces/workspace/{workspace.pk}/change/")

    assert page.status_code == 200
    html = page.content.decode()
    assert str(editor.pk) in html and "editor" in html
    assert key.prefix in html and "deployer" in html
    assert raw not in html and key.digest not in html


def test_the_key_list_shows_prefix_and_scopes_but_never_the_secret_or_digest(admin_client):
    key, raw = make_api_key(workspace=WorkspaceFactory(), scopes=["agents:read", "workspaces:read"])

    page = admin_client.get("/admin/workspaces/apikey/")
    detail = admin_client.get(f"/admin/workspaces/apikey/{key.pk}/change/")

    assert page.status_code == 200 and detail.status_code == 200
    for html in (page.content.decode(), detail.content.decode()):
        assert key.prefix in html and "workspaces:read" in html
        assert raw not in html and key.digest not in html


def test_keys_cannot_be_added_in_the_admin(admin_client):
    assert admin_client.get("/admin/workspaces/apikey/add/").status_code == 403


def test_the_revoke_action_revokes_the_selected_keys_and_they_stop_working(admin_client):
    workspace = WorkspaceFactory()
    revoked, revoked_raw = make_api_key(workspace=workspace, scopes=["workspaces:read"])
    kept, kept_raw = make_api_key(workspace=workspace, scopes=["workspaces:read"])

    response = admin_client.post(
        "/admin/workspaces/apikey/", {"action": "revoke", "_selected_action": [str(revoked.pk)]}, follow=True
    )

    assert response.status_code == 200
    assert b"Revoked 1 API key" in response.content
    assert ApiKey.objects.get(pk=revoked.pk).revoked_at is not None
    assert ApiKey.objects.get(pk=kept.pk).revoked_at is None
    assert client_for(api_key=revoked_raw).get("/api/workspaces").status_code == 401
    assert client_for(api_key=kept_raw).get("/api/workspaces").status_code == 200


def test_a_regular_user_cannot_open_the_workspace_admin(client):
    client.force_login(UserFactory())

    response = client.get("/admin/workspaces/workspace/")

    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]
