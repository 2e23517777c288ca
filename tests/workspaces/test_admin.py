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


def test_a_member_issues_a_key_that_is_shown_once_and_works(client):
    operator = AdminFactory()
    workspace = WorkspaceFactory(name="Ops")
    make_member(workspace, Role.ADMIN, user=operator)
    client.force_login(operator)

    issued = client.post("/admin/workspaces/apikey/add/", {"workspace": workspace.pk, "name": "ci-deployer",
                                                           "scopes": ["agents:read", "workspaces:read"]})

    assert issued.status_code == 200, issued.content.decode()[-2000:]
    key = ApiKey.objects.get(name="ci-deployer")
    assert (key.workspace_id, key.created_by_id, key.scopes) == (workspace.pk, operator.pk,
                                                                  ["agents:read", "workspaces:read"])
    html = issued.content.decode()
    raw = html.split('id="api-key-value" class="fleet-secret">')[1].split("<")[0]
    assert raw.startswith(key.prefix) and "never shows it again" in html
    assert "no-store" in issued["Cache-Control"]
    assert client_for(api_key=raw).get("/api/workspaces").status_code == 200
    for page in ("/admin/workspaces/apikey/", f"/admin/workspaces/apikey/{key.pk}/change/",
                 f"/admin/workspaces/workspace/{workspace.pk}/change/"):
        assert raw not in client.get(page).content.decode()


def test_the_routes_checks_refuse_a_key_on_the_form(client):
    operator = AdminFactory()
    workspace = WorkspaceFactory()
    client.force_login(operator)

    not_member = client.post("/admin/workspaces/apikey/add/", {"workspace": workspace.pk, "name": "k",
                                                               "scopes": ["agents:read"]})
    make_member(workspace, Role.ADMIN, user=operator)
    no_scope = client.post("/admin/workspaces/apikey/add/", {"workspace": workspace.pk, "name": "k"})
    blank_name = client.post("/admin/workspaces/apikey/add/", {"workspace": workspace.pk, "name": " ",
                                                               "scopes": ["agents:read"]})

    assert not_member.status_code == 200 and "Only members of the workspace" in not_member.content.decode()
    assert no_scope.status_code == 200 and "This field is required." in no_scope.content.decode()
    assert blank_name.status_code == 200 and "This field" in blank_name.content.decode()
    assert not ApiKey.objects.exists()


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
