"""The shape of a channel type definition."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FIELD_TYPES = ("text", "password", "url", "select", "boolean", "integer", "list", "json")
LOGIN_KINDS = ("qr", "cli", "none")


@dataclass(frozen=True)
class ConfigField:
    key: str
    label: str
    type: str = "text"
    required: bool = False
    # {"field": value}: required only while another field has that value (e.g. Slack's
    # signingSecret in http mode).
    required_when: dict[str, Any] | None = None
    default: Any = None
    options: tuple[str, ...] = ()
    secret: bool = False
    help: str = ""

    def __post_init__(self):
        if self.type not in FIELD_TYPES:
            raise ValueError(f"{self.key}: unknown field type {self.type!r}")
        if self.type == "select" and not self.options:
            raise ValueError(f"{self.key}: a select field needs options")


@dataclass(frozen=True)
class Plugin:
    """The OpenClaw plugin a channel needs: bundled with OpenClaw, or an npm package that an
    image may carry (its path is then linked through `plugins.load.paths`)."""

    package: str
    bundled: bool = False


@dataclass(frozen=True)
class Definition:
    type: str
    label: str
    description: str
    config_fields: tuple[ConfigField, ...] = ()
    login: str = "none"
    can_logout: bool = False
    plugin: Plugin | None = None
    receives: bool = False  # legacy: the type takes inbound messages at /api/webhooks/<id>
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.login not in LOGIN_KINDS:
            raise ValueError(f"{self.type}: unknown login kind {self.login!r}")

    @property
    def secret_keys(self) -> tuple[str, ...]:
        return tuple(f.key for f in self.config_fields if f.secret)

    def field(self, key: str) -> ConfigField | None:
        return next((f for f in self.config_fields if f.key == key), None)
