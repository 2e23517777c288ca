"""The provider catalog: one JSON data file (providers.json), loaded once and read-only.

Each provider names its category, `authType`, `configFields` (as channel fields, each with the
`env` variable it maps to, or null when the value never reaches the runtime, like an OAuth
client secret), `credentialsUrl`, `setupGuide`, `mcp` (a stdio server the runtime can run, or
null) and `test` (how a connection test calls the provider, or null). OAuth providers add an
`oauth` block (authorize and token URLs, scopes, PKCE, token lifetime). tests/integrations/
test_catalog_schema.py checks every entry.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache
from pathlib import Path

DATA_FILE = Path(__file__).with_name("providers.json")

CATEGORIES = (
    "developer-tools", "devops", "communication", "productivity", "crm", "data", "cloud", "monitoring",
    "payment", "social", "ai-ml", "storage", "search", "analytics", "automation", "ecommerce",
)
AUTH_TYPES = ("api_key", "oauth2", "basic", "none")
FIELD_TYPES = ("text", "password", "url", "select", "boolean", "integer", "list", "json")
MCP_PROVIDERS = ("gitlab", "notion", "stripe", "supabase")  # the contract's list (Integrations rule 5)


@lru_cache(maxsize=1)
def _loaded() -> tuple[tuple[dict, ...], dict[str, dict]]:
    providers = tuple(json.loads(DATA_FILE.read_text())["providers"])
    return providers, {p["id"]: p for p in providers}


def providers(category: str | None = None) -> list[dict]:
    """Catalog entries (copies), in file order; an unknown category is an empty list."""
    entries = _loaded()[0]
    return [copy.deepcopy(p) for p in entries if category in (None, p["category"])]


def provider(provider_id: str) -> dict | None:
    """One entry (shared, do not mutate), or None."""
    return _loaded()[1].get(provider_id)


def field_of(entry: dict, key: str) -> dict | None:
    return next((f for f in entry["configFields"] if f["key"] == key), None)


@lru_cache(maxsize=1)
def managed_env_names() -> frozenset[str]:
    """Every variable some provider maps to: the names Fleet owns in a runtime's env config,
    so a sync may remove those no integration of the agent sets any more."""
    return frozenset(f["env"] for p in _loaded()[0] for f in p["configFields"] if f.get("env"))
