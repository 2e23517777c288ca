"""Where a provider's API, authorize and token endpoints are: the catalog's, unless the setting
INTEGRATION_ENDPOINTS (`{"<provider>": {"api": URL, "authorize": URL, "token": URL}}`) names
another (loopback fakes in tests, a private deployment's gateway)."""

from __future__ import annotations

from fleet.json_settings import json_object_setting

KINDS = ("api", "authorize", "token")


def overrides() -> dict:
    return json_object_setting("INTEGRATION_ENDPOINTS", holds="providers")


def endpoint_override(provider_id: str, kind: str) -> str | None:
    entry = overrides().get(provider_id) or {}
    url = entry.get(kind) if isinstance(entry, dict) else None
    return url.rstrip("/") if isinstance(url, str) and url else None


def oauth_endpoint(entry: dict, kind: str) -> str:
    """The authorize or token URL of an OAuth provider."""
    return endpoint_override(entry["id"], kind) or entry["oauth"][f"{kind}Url"]
