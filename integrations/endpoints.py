"""Where a provider's API, authorize and token endpoints are: the catalog's, unless the setting
INTEGRATION_ENDPOINTS (`{"<provider>": {"api": URL, "authorize": URL, "token": URL}}`) names
another (loopback fakes in tests, a private deployment's gateway)."""

from __future__ import annotations

import json

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

KINDS = ("api", "authorize", "token")


def overrides() -> dict:
    value = settings.INTEGRATION_ENDPOINTS
    if isinstance(value, str):
        try:
            value = json.loads(value or "{}")
        except ValueError as exc:
            raise ImproperlyConfigured(f"INTEGRATION_ENDPOINTS is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ImproperlyConfigured("INTEGRATION_ENDPOINTS must be a JSON object of providers.")
    return value


def endpoint_override(provider_id: str, kind: str) -> str | None:
    entry = overrides().get(provider_id) or {}
    url = entry.get(kind) if isinstance(entry, dict) else None
    return url.rstrip("/") if isinstance(url, str) and url else None


def oauth_endpoint(entry: dict, kind: str) -> str:
    """The authorize or token URL of an OAuth provider."""
    return endpoint_override(entry["id"], kind) or entry["oauth"][f"{kind}Url"]
