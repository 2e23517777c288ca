"""POST .../keys/:kid/test: a real GET <baseUrl>/models on a loopback server, with the provider's
auth header style; the result (models count or error code) is recorded and never carries the key."""

from __future__ import annotations

import logging

import pytest

from llm.models import ProviderKey
from llm.services import key_create
from tests.infra.http import Reply

pytestmark = pytest.mark.django_db

SECRET = "sk-live-9988776655443322"

# provider -> (the header carrying the key, its value)
AUTH = {
    "openai": ("authorization", f"Bearer {SECRET}"),
    "anthropic": ("x-api-key", SECRET),
    "google": ("x-goog-api-key", SECRET),
    "nvidia": ("authorization", f"Bearer {SECRET}"),
}


@pytest.mark.parametrize("provider", sorted(AUTH))
def test_the_test_lists_the_models_with_the_saved_key(tenancy, settings, http_receiver, provider, caplog):
    settings.LLM_PROVIDER_ENDPOINTS = {provider: http_receiver.url + "/v1"}
    http_receiver.route("/v1/models", {"data": [{"id": "a"}, {"id": "b"}, {"id": "c"}]})
    key = key_create(provider=provider, label="k", api_key=SECRET, base_url=None, created_by=None,
                     user=tenancy.editor)
    caplog.set_level(logging.DEBUG)

    response = tenancy.client("editor").post(f"/api/llm/keys/{key.id}/test")

    assert response.status_code == 200 and response.json() == {"ok": True, "models": 3}
    request = http_receiver.wait_for(1)[0]
    header, value = AUTH[provider]
    assert (request.method, request.path, request.header(header)) == ("GET", "/v1/models", value)
    listed = tenancy.client("editor").get("/api/llm/keys").json()[0]
    assert listed["lastTestResult"] == {"ok": True, "models": 3} and listed["lastTestedAt"]
    assert SECRET not in response.content.decode() and SECRET not in caplog.text


def test_an_openai_compatible_server_is_reached_at_the_keys_base_url(tenancy, fake_model):
    key = key_create(provider="openai-compatible", label="local", api_key="", base_url=fake_model.base_url,
                     created_by=None, user=tenancy.editor)

    response = tenancy.client("editor").post(f"/api/llm/keys/{key.id}/test")

    assert response.status_code == 200 and response.json() == {"ok": True, "models": 1}


@pytest.mark.parametrize(("status", "code"), [(401, "unauthorized"), (403, "unauthorized"), (500, "http_500")])
def test_a_refusal_is_recorded_as_an_error_code(tenancy, settings, http_receiver, status, code):
    settings.LLM_PROVIDER_ENDPOINTS = {"openai": http_receiver.url}
    http_receiver.route("/models", Reply(status, {"error": {"message": f"bad key {SECRET}"}}))
    key = key_create(provider="openai", label="k", api_key=SECRET, base_url=None, created_by=None, user=tenancy.editor)

    response = tenancy.client("editor").post(f"/api/llm/keys/{key.id}/test")

    assert response.status_code == 200 and response.json() == {"ok": False, "error": code}
    assert ProviderKey.objects.get().last_test_result == {"ok": False, "error": code}
    assert SECRET not in response.content.decode()


def test_an_answer_that_is_not_a_model_list_is_invalid(tenancy, settings, http_receiver):
    settings.LLM_PROVIDER_ENDPOINTS = {"openai": http_receiver.url}
    http_receiver.route("/models", "<html>hi</html>")
    key = key_create(provider="openai", label="k", api_key=SECRET, base_url=None, created_by=None, user=tenancy.editor)

    response = tenancy.client("editor").post(f"/api/llm/keys/{key.id}/test")

    assert response.json() == {"ok": False, "error": "invalid_response"}


def test_a_target_no_longer_allowed_is_refused_without_a_request(tenancy, settings, http_receiver):
    key = key_create(provider="openai-compatible", label="k", api_key=SECRET, base_url=http_receiver.url,
                     created_by=None, user=tenancy.editor)
    settings.OUTBOUND_ALLOWED_HOSTS = []

    response = tenancy.client("editor").post(f"/api/llm/keys/{key.id}/test")

    assert response.json() == {"ok": False, "error": "unsafe_target"}
    assert http_receiver.requests == []

