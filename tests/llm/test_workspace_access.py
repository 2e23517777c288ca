"""Who may call a workspace's key routes: members read (and a key with workspaces:read), editors
test, admins write (sessions only); callers outside the workspace see 404; no credential is 401."""

from __future__ import annotations

import pytest

from llm.models import ProviderKey
from llm.services import key_create

pytestmark = pytest.mark.django_db

SECRET = "sk-workspace-0011223344"


@pytest.fixture
def key(tenancy):
    # A base URL on a closed loopback port: the test route answers (unreachable) without the network.
    return key_create(provider="openai", label="team", api_key=SECRET, base_url="http://127.0.0.1:9/v1",
                      created_by=tenancy.owner, workspace=tenancy.workspace)


def url(tenancy, suffix=""):
    return f"/api/workspaces/{tenancy.workspace.id}/llm/keys{suffix}"


def call(client, route, tenancy, key):
    if route == "list":
        return client.get(url(tenancy))
    if route == "create":
        return client.post(url(tenancy), {"provider": "groq", "label": "g", "apiKey": "gsk-abc"}, format="json")
    if route == "update":
        return client.patch(url(tenancy, f"/{key.id}"), {"label": "renamed", "apiKey": "[REDACTED]"}, format="json")
    if route == "delete":
        return client.delete(url(tenancy, f"/{key.id}"))
    if route == "test":
        return client.post(url(tenancy, f"/{key.id}/test"))
    raise AssertionError(route)


ROUTES = ["list", "create", "update", "delete", "test"]
GRANTED = {"list": 200, "create": 201, "update": 200, "delete": 200, "test": 200}
ADMIN_ONLY = ["create", "update", "delete"]


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("caller", ["admin", "owner", "platform_admin"])
def test_admins_may_call_every_route(tenancy, key, route, caller):
    response = call(tenancy.client(caller), route, tenancy, key)

    assert response.status_code == GRANTED[route], response.content
    assert SECRET not in response.content.decode()


@pytest.mark.parametrize("caller", ["viewer", "editor", "key:workspaces:read"])
def test_members_and_read_keys_read_the_list_redacted(tenancy, key, caller):
    response = call(tenancy.client(caller), "list", tenancy, key)

    assert response.status_code == 200, response.content
    assert [(k["label"], k["apiKey"], k["workspaceId"]) for k in response.json()] == [
        ("team", "[REDACTED]", str(tenancy.workspace.id))]


def test_editors_may_test_a_workspace_key(tenancy, key):
    response = call(tenancy.client("editor"), "test", tenancy, key)

    assert response.status_code == 200 and response.json() == {"ok": False, "error": "unreachable"}


@pytest.mark.parametrize("route", ADMIN_ONLY)
def test_editors_may_not_manage(tenancy, key, route):
    response = call(tenancy.client("editor"), route, tenancy, key)

    assert response.status_code == 403 and response.json()["code"] == "permission_denied"
    assert ProviderKey.objects.get().label == "team"


@pytest.mark.parametrize("route", [*ADMIN_ONLY, "test"])
def test_viewers_may_neither_manage_nor_test(tenancy, key, route):
    response = call(tenancy.client("viewer"), route, tenancy, key)

    assert response.status_code == 403 and response.json()["code"] == "permission_denied"


@pytest.mark.parametrize("route", [*ADMIN_ONLY, "test"])
def test_api_keys_never_write(tenancy, key, route):
    response = call(tenancy.client("key:agents:read,agents:write,workspaces:read"), route, tenancy, key)

    assert response.status_code == 403 and response.json()["code"] == "session_required"
    assert ProviderKey.objects.get().api_key == SECRET


@pytest.mark.parametrize("caller", ["key:agents:read", "key:agents:write"])
def test_a_key_without_workspaces_read_is_refused(tenancy, key, caller):
    response = call(tenancy.client(caller), "list", tenancy, key)

    assert response.status_code == 403 and response.json()["code"] == "missing_scope"


def test_another_workspaces_key_is_403_wrong_workspace(tenancy, key):
    response = call(tenancy.client("other-key"), "list", tenancy, key)

    assert response.status_code == 403 and response.json()["code"] == "wrong_workspace"


@pytest.mark.parametrize("route", ROUTES)
def test_outsiders_see_404(tenancy, key, route):
    response = call(tenancy.client("outsider"), route, tenancy, key)

    assert response.status_code == 404 and response.json()["code"] == "not_found"


@pytest.mark.parametrize("route", ROUTES)
def test_without_a_credential_every_route_is_401(tenancy, key, route):
    response = call(tenancy.client("anonymous"), route, tenancy, key)

    assert response.status_code == 401 and response.json()["code"] == "not_authenticated"


def test_a_key_of_another_workspace_is_404_here(tenancy):
    theirs = key_create(provider="openai", label="x", api_key=SECRET, base_url=None, created_by=tenancy.outsider,
                        workspace=tenancy.other_workspace)
    client = tenancy.client("admin")

    assert client.patch(url(tenancy, f"/{theirs.id}"), {"label": "y"}, format="json").status_code == 404
    assert client.delete(url(tenancy, f"/{theirs.id}")).status_code == 404
    assert client.post(url(tenancy, f"/{theirs.id}/test")).status_code == 404


def test_a_users_own_key_is_not_a_workspace_key(tenancy):
    own = key_create(provider="openai", label="x", api_key=SECRET, base_url=None, created_by=None, user=tenancy.admin)

    response = tenancy.client("admin").delete(url(tenancy, f"/{own.id}"))

    assert response.status_code == 404 and ProviderKey.objects.filter(pk=own.pk).exists()
