"""Provider keys of a user: the catalog, create, read (always [REDACTED]), update, delete, test."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection

from llm.models import ProviderKey
from llm.services import key_create
from tests.support import client_for

pytestmark = pytest.mark.django_db

SECRET = "sk-test-ab12cd34ef56gh78"


def test_the_providers_are_listed_with_their_wire_format(tenancy):
    response = tenancy.client("viewer").get("/api/llm/providers")

    assert response.status_code == 200
    rows = {row["id"]: row for row in response.json()}
    assert list(rows) == ["openai", "anthropic", "google", "openrouter", "mistral", "groq", "nvidia",
                          "openai-compatible"]
    assert rows["anthropic"]["kind"] == "anthropic" and rows["google"]["kind"] == "google"
    assert rows["openai-compatible"] == {"id": "openai-compatible", "name": "OpenAI-compatible", "kind": "openai",
                                         "baseUrl": None, "keyRequired": False,
                                         "docsUrl": "https://platform.openai.com/docs/api-reference/models/list"}


def test_llm_provider_endpoints_override_a_base_url(tenancy, settings):
    settings.LLM_PROVIDER_ENDPOINTS = {"openai": "http://127.0.0.1:9/v1/"}

    rows = {r["id"]: r for r in tenancy.client("viewer").get("/api/llm/providers").json()}

    assert rows["openai"]["baseUrl"] == "http://127.0.0.1:9/v1"


def test_providers_need_a_credential(tenancy):
    assert tenancy.client("anonymous").get("/api/llm/providers").status_code == 401


def test_a_user_saves_a_key_and_only_ever_sees_it_redacted(tenancy):
    client = tenancy.client("editor")

    created = client.post("/api/llm/keys", {"provider": "openai", "label": "mine", "apiKey": SECRET}, format="json")
    listed = client.get("/api/llm/keys")

    assert created.status_code == 201, created.content
    body = created.json()
    assert body["apiKey"] == "[REDACTED]" and body["provider"] == "openai" and body["workspaceId"] is None
    assert listed.json() == [body]
    assert SECRET not in created.content.decode() + listed.content.decode()
    assert ProviderKey.objects.get().api_key == SECRET


def test_the_key_is_encrypted_at_rest(tenancy):
    key_create(provider="openai", label="x", api_key=SECRET, base_url=None, created_by=None, user=tenancy.editor)
    with connection.cursor() as cursor:
        cursor.execute("SELECT api_key FROM llm_providerkey")
        (stored,) = cursor.fetchone()

    assert SECRET not in stored


def test_users_see_only_their_own_keys(tenancy):
    key = key_create(provider="openai", label="x", api_key=SECRET, base_url=None, created_by=None,
                     user=tenancy.editor)
    other = tenancy.client("viewer")

    assert other.get("/api/llm/keys").json() == []
    assert other.patch(f"/api/llm/keys/{key.id}", {"label": "y"}, format="json").status_code == 404
    assert other.delete(f"/api/llm/keys/{key.id}").status_code == 404
    assert other.post(f"/api/llm/keys/{key.id}/test").status_code == 404
    assert ProviderKey.objects.get().label == "x"


@pytest.mark.parametrize(("body", "field"), [
    ({"provider": "nope", "label": "x", "apiKey": SECRET}, "provider"),
    ({"provider": "openai", "apiKey": SECRET}, "label"),
    ({"provider": "openai", "label": "x"}, "apiKey"),
    ({"provider": "openai", "label": "x", "apiKey": "[REDACTED]"}, "apiKey"),
    ({"provider": "openai", "label": "x", "apiKey": "sk-a\nInjected: 1"}, "apiKey"),
    ({"provider": "openai", "label": "x", "apiKey": "sk-a\u2028b"}, "apiKey"),
    ({"provider": "openai", "label": "x", "apiKey": 12345}, "apiKey"),
    ({"provider": "openai-compatible", "label": "x", "apiKey": ""}, "baseUrl"),
    ({"provider": "openai-compatible", "label": "x", "baseUrl": "http://169.254.169.254/v1"}, "baseUrl"),
    ({"provider": "openai-compatible", "label": "x", "baseUrl": "http://10.0.0.1/v1"}, "baseUrl"),
    ({"provider": "openai-compatible", "label": "x", "baseUrl": "file:///etc/passwd"}, "baseUrl"),
    ({"provider": "openai", "label": "x", "apiKey": SECRET, "baseUrl": "http://user:pw@127.0.0.1/v1"}, "baseUrl"),
])
def test_bad_bodies_are_400_with_the_field(tenancy, body, field):
    response = tenancy.client("editor").post("/api/llm/keys", body, format="json")

    assert response.status_code == 400, response.content
    assert field in response.json()["fields"]
    assert not ProviderKey.objects.exists()


def test_an_openai_compatible_server_needs_no_key(tenancy):
    response = tenancy.client("editor").post(
        "/api/llm/keys", {"provider": "openai-compatible", "label": "ollama", "baseUrl": "http://127.0.0.1:11434/v1"},
        format="json")

    assert response.status_code == 201 and response.json()["apiKey"] == ""
    assert response.json()["baseUrl"] == "http://127.0.0.1:11434/v1"


def test_redacted_written_back_keeps_the_key_and_a_new_key_replaces_it(tenancy):
    key = key_create(provider="openai", label="x", api_key=SECRET, base_url=None, created_by=None,
                     user=tenancy.editor)
    client = tenancy.client("editor")

    kept = client.patch(f"/api/llm/keys/{key.id}", {"label": "renamed", "apiKey": "[REDACTED]"}, format="json")
    key.refresh_from_db()
    assert kept.status_code == 200 and kept.json()["label"] == "renamed" and key.api_key == SECRET

    replaced = client.patch(f"/api/llm/keys/{key.id}", {"apiKey": "sk-new-value-1234"}, format="json")
    key.refresh_from_db()
    assert replaced.status_code == 200 and replaced.json()["apiKey"] == "[REDACTED]"
    assert key.api_key == "sk-new-value-1234"


def test_a_bad_update_is_400_and_changes_nothing(tenancy):
    key = key_create(provider="openai", label="x", api_key=SECRET, base_url=None, created_by=None,
                     user=tenancy.editor)

    response = tenancy.client("editor").patch(f"/api/llm/keys/{key.id}", {"apiKey": "a\rb"}, format="json")

    key.refresh_from_db()
    assert response.status_code == 400 and "apiKey" in response.json()["fields"] and key.api_key == SECRET


def test_delete_removes_the_key(tenancy):
    key = key_create(provider="openai", label="x", api_key=SECRET, base_url=None, created_by=None,
                     user=tenancy.editor)

    response = tenancy.client("editor").delete(f"/api/llm/keys/{key.id}")

    assert response.status_code == 200 and response.json() == {"success": True}
    assert not ProviderKey.objects.exists()


def test_unknown_keys_are_404(tenancy):
    client = tenancy.client("editor")

    assert client.patch(f"/api/llm/keys/{uuid.uuid4()}", {"label": "y"}, format="json").status_code == 404
    assert client.delete(f"/api/llm/keys/{uuid.uuid4()}").status_code == 404
    assert client.post(f"/api/llm/keys/{uuid.uuid4()}/test").status_code == 404


@pytest.mark.parametrize(("method", "path"), [
    ("get", "/api/llm/keys"), ("post", "/api/llm/keys"), ("patch", "/api/llm/keys/{id}"),
    ("delete", "/api/llm/keys/{id}"), ("post", "/api/llm/keys/{id}/test"),
])
def test_own_keys_are_session_only_and_need_a_credential(tenancy, method, path):
    key = key_create(provider="openai", label="x", api_key=SECRET, base_url=None, created_by=None, user=tenancy.owner)
    path = path.format(id=key.id)
    keyed = getattr(tenancy.client("key:agents:read,agents:write,workspaces:read"), method)(path, {}, format="json")
    anonymous = getattr(client_for(), method)(path, {}, format="json")

    assert keyed.status_code == 403 and keyed.json()["code"] == "session_required"
    assert anonymous.status_code == 401
    assert ProviderKey.objects.get().api_key == SECRET
