"""PUT/DELETE /auth/provider-keys/nvidia: the caller's NVIDIA key, encrypted, never shown back;
the self-hosted fallback NVIDIA_API_KEY when none is saved."""

from __future__ import annotations

import pytest
from django.db import connection

from llm.models import ProviderKey
from llm.selectors import own_key_value
from tests.support import client_for

pytestmark = pytest.mark.django_db

URL = "/api/auth/provider-keys/nvidia"
KEY = "nvapi-" + "A1b2" * 10


def test_put_saves_the_key_encrypted_and_never_answers_it(user):
    response = client_for(user).put(URL, {"key": KEY}, format="json")

    assert response.status_code == 200, response.content
    assert KEY not in response.content.decode()
    assert (response.json()["provider"], response.json()["configured"]) == ("nvidia", True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT api_key FROM llm_providerkey")
        (stored,) = cursor.fetchone()
    assert KEY not in stored and stored.startswith("v1:")
    assert own_key_value(user_id=user.id, provider="nvidia") == KEY


def test_a_second_put_replaces_the_key_and_redacted_keeps_it(user):
    client = client_for(user)
    client.put(URL, {"key": KEY}, format="json")
    client.put(URL, {"key": KEY + "2"}, format="json")
    assert client.put(URL, {"key": "[REDACTED]"}, format="json").status_code == 200

    assert ProviderKey.objects.count() == 1
    assert own_key_value(user_id=user.id, provider="nvidia") == KEY + "2"


def test_redacted_with_nothing_stored_is_400(user):
    response = client_for(user).put(URL, {"key": "[REDACTED]"}, format="json")

    assert (response.status_code, list(response.json()["fields"])) == (400, ["key"])


@pytest.mark.parametrize("body", [{}, {"key": ""}, {"key": "short"}, {"key": "has space inside"}, {"key": 12345678},
                                  {"key": "x" * 513}])
def test_bad_keys_are_400_naming_the_field(user, body):
    response = client_for(user).put(URL, body, format="json")

    assert response.status_code == 400, response.content
    assert "key" in response.json()["fields"]
    assert not ProviderKey.objects.exists()


def test_delete_removes_the_key_and_is_idempotent(user):
    client = client_for(user)
    client.put(URL, {"key": KEY}, format="json")

    assert client.delete(URL).json() == {"success": True}
    assert client.delete(URL).status_code == 200
    assert not ProviderKey.objects.exists()


def test_an_unknown_provider_is_404(user):
    assert client_for(user).put("/api/auth/provider-keys/openai", {"key": KEY}, format="json").status_code == 404
    assert client_for(user).delete("/api/auth/provider-keys/openai").status_code == 404


def test_each_user_has_their_own_key(tenancy):
    client_for(tenancy.editor).put(URL, {"key": KEY}, format="json")

    assert own_key_value(user_id=tenancy.editor.id, provider="nvidia") == KEY
    assert own_key_value(user_id=tenancy.viewer.id, provider="nvidia") == ""


@pytest.mark.parametrize(("who", "status"), [("key:agents:read,agents:write", 403), ("other-key", 403),
                                             ("anonymous", 401)])
def test_only_a_session_may_set_or_remove_a_key(tenancy, who, status):
    client = tenancy.client(who)

    assert client.put(URL, {"key": KEY}, format="json").status_code == status
    assert client.delete(URL).status_code == status
    assert not ProviderKey.objects.exists()


def test_a_key_gets_session_required(tenancy):
    response = tenancy.client("key:agents:write").put(URL, {"key": KEY}, format="json")

    assert response.json()["code"] == "session_required"


def test_the_platform_fallback_applies_on_self_hosted_only(user, settings):
    settings.NVIDIA_API_KEY = "nvapi-platform-fallback"

    settings.PLATFORM_MODE = "selfhosted"
    assert own_key_value(user_id=user.id, provider="nvidia") == "nvapi-platform-fallback"
    settings.PLATFORM_MODE = "paas"
    assert own_key_value(user_id=user.id, provider="nvidia") == ""
    client_for(user).put(URL, {"key": KEY}, format="json")
    assert own_key_value(user_id=user.id, provider="nvidia") == KEY
