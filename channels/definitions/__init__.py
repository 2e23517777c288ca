"""Channel type definitions (docs/api.md "Channels"): what a type is called, the config fields it
takes, how it logs in. OpenClaw types are runtime-managed (their config is pushed into the
runtime's `channels.<id>` block); legacy types are Fleet's own adapters for Hermes agents.

    definition_for("openclaw", "telegram").config_fields[0].key   # "botToken"
"""

from __future__ import annotations

from .base import FIELD_TYPES, LOGIN_KINDS, ConfigField, Definition, Plugin
from .legacy import LEGACY_TYPES
from .openclaw import LOGOUT_TYPES, OPENCLAW_TYPES

RUNTIME_OPENCLAW = "openclaw"
RUNTIME_LEGACY = "legacy"

CATALOGS: dict[str, dict[str, Definition]] = {
    RUNTIME_OPENCLAW: {d.type: d for d in OPENCLAW_TYPES},
    RUNTIME_LEGACY: {d.type: d for d in LEGACY_TYPES},
}


def definitions_of(runtime: str) -> tuple[Definition, ...]:
    return tuple(CATALOGS[runtime].values())


def definition_for(runtime: str, type_: str) -> Definition | None:
    return CATALOGS[runtime].get(type_)


__all__ = [
    "CATALOGS",
    "FIELD_TYPES",
    "LEGACY_TYPES",
    "LOGIN_KINDS",
    "LOGOUT_TYPES",
    "OPENCLAW_TYPES",
    "RUNTIME_LEGACY",
    "RUNTIME_OPENCLAW",
    "ConfigField",
    "Definition",
    "Plugin",
    "definition_for",
    "definitions_of",
]
