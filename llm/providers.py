"""The model providers Fleet knows, and where their APIs are.

`kind` is the wire format a runtime speaks to the provider (openai, anthropic, google).
`auth` is how the key is sent: `bearer` (Authorization: Bearer), `x-api-key` (Anthropic, with
its version header) or `x-goog-api-key` (Google). LLM_PROVIDER_ENDPOINTS
(`{"<provider>": "<base URL>"}`) overrides a base URL: self-hosted gateways, loopback fakes in tests.
"""

from __future__ import annotations

from fleet.errors import NotFound
from fleet.json_settings import json_object_setting

OPENAI_COMPATIBLE = "openai-compatible"

_PROVIDERS: tuple[dict, ...] = (
    {"id": "openai", "name": "OpenAI", "kind": "openai", "auth": "bearer",
     "baseUrl": "https://api.openai.com/v1", "keyRequired": True,
     "docsUrl": "https://platform.openai.com/docs/api-reference"},
    {"id": "anthropic", "name": "Anthropic", "kind": "anthropic", "auth": "x-api-key",
     "baseUrl": "https://api.anthropic.com/v1", "keyRequired": True,
     "docsUrl": "https://docs.anthropic.com/en/api"},
    {"id": "google", "name": "Google Gemini", "kind": "google", "auth": "x-goog-api-key",
     "baseUrl": "https://generativelanguage.googleapis.com/v1beta", "keyRequired": True,
     "docsUrl": "https://ai.google.dev/gemini-api/docs"},
    {"id": "openrouter", "name": "OpenRouter", "kind": "openai", "auth": "bearer",
     "baseUrl": "https://openrouter.ai/api/v1", "keyRequired": True,
     "docsUrl": "https://openrouter.ai/docs"},
    {"id": "mistral", "name": "Mistral AI", "kind": "openai", "auth": "bearer",
     "baseUrl": "https://api.mistral.ai/v1", "keyRequired": True,
     "docsUrl": "https://docs.mistral.ai/api/"},
    {"id": "groq", "name": "Groq", "kind": "openai", "auth": "bearer",
     "baseUrl": "https://api.groq.com/openai/v1", "keyRequired": True,
     "docsUrl": "https://console.groq.com/docs/api-reference"},
    {"id": "nvidia", "name": "NVIDIA", "kind": "openai", "auth": "bearer",
     "baseUrl": "https://integrate.api.nvidia.com/v1", "keyRequired": True,
     "docsUrl": "https://docs.api.nvidia.com/nim/reference"},
    # Any OpenAI-compatible server (Ollama, vLLM, LiteLLM): the key names its base URL; a local
    # server may need no key.
    {"id": OPENAI_COMPATIBLE, "name": "OpenAI-compatible", "kind": "openai", "auth": "bearer",
     "baseUrl": None, "keyRequired": False,
     "docsUrl": "https://platform.openai.com/docs/api-reference/models/list"},
)
IDS = tuple(p["id"] for p in _PROVIDERS)
PUBLIC_FIELDS = ("id", "name", "kind", "baseUrl", "keyRequired", "docsUrl")


def overrides() -> dict:
    return json_object_setting("LLM_PROVIDER_ENDPOINTS", holds="provider -> base URL")


def provider(provider_id: str) -> dict | None:
    """The provider's entry with its effective base URL, or None."""
    for entry in _PROVIDERS:
        if entry["id"] == provider_id:
            override = overrides().get(provider_id)
            if isinstance(override, str) and override:
                return {**entry, "baseUrl": override.rstrip("/")}
            return dict(entry)
    return None


def require(provider_id: str) -> dict:
    entry = provider(provider_id)
    if entry is None:
        raise NotFound(f"Unknown model provider '{provider_id}'.")
    return entry


def providers() -> list[dict]:
    return [{k: provider(p["id"])[k] for k in PUBLIC_FIELDS} for p in _PROVIDERS]


def auth_headers(entry: dict, key: str) -> dict:
    """The headers that carry `key` the way the provider expects (none without a key)."""
    if not key:
        return {}
    if entry["auth"] == "x-api-key":
        return {"x-api-key": key, "anthropic-version": "2023-06-01"}
    if entry["auth"] == "x-goog-api-key":
        return {"x-goog-api-key": key}
    return {"Authorization": f"Bearer {key}"}
