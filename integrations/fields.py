"""A provider's config against its catalog fields: validation, secret split, redaction, env.

A config arrives as one flat object `{field key: value}`. Secret fields go to the encrypted
`secrets` blob, the others to `config` in clear. Reads show each stored secret as `[REDACTED]`;
a write that sends `[REDACTED]` back keeps the stored value. Fields marked `managed: "oauth"`
are filled by the OAuth flow only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from fleet import netsafety
from fleet.errors import ValidationFailed
from fleet.redaction import NOTHING_TO_KEEP, REDACTED, keeps_stored
from fleet.values import env_value_allowed

MAX_VALUE_CHARS = 20_000


@dataclass
class SplitConfig:
    plain: dict
    secret: dict


def _coerce(field: dict, value):
    """The value a field stores, or raise ValueError with the reason."""
    kind = field["type"]
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        raise ValueError("Must be true or false.")
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ValueError("Must be an integer.")
        try:
            return int(value)
        except ValueError:
            raise ValueError("Must be an integer.") from None
    if kind == "list":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError("Must be a list of strings.")
        if not all(env_value_allowed(v) for v in value):
            raise ValueError("Control characters and line breaks are not allowed.")
        return value
    if kind == "json":
        return value
    if not isinstance(value, str):
        raise ValueError("Must be a string.")
    value = value.strip()
    if len(value) > MAX_VALUE_CHARS:
        raise ValueError(f"At most {MAX_VALUE_CHARS} characters.")
    if not env_value_allowed(value):
        raise ValueError("Control characters and line breaks are not allowed.")
    if kind == "select" and value and value not in field.get("options", ()):
        raise ValueError(f"Must be one of: {', '.join(field['options'])}.")
    if kind == "url" and value and not field.get("secret"):
        try:
            netsafety.check_url(value)
        except netsafety.UnsafeTarget as exc:
            raise ValueError(str(exc)) from None
    return value


def config_validate(entry: dict, incoming, *, stored: SplitConfig | None = None,
                    allow_managed: bool = False) -> SplitConfig:
    """Merge `incoming` over `stored` (a PATCH) or over nothing (a connect) and check it all.

    ValidationFailed (400 with `fields`) for unknown keys, wrong types, a missing required
    field, or `[REDACTED]` for a secret that is not stored."""
    if not isinstance(incoming, dict):
        raise ValidationFailed({"config": ["Must be an object of the provider's fields."]})
    fields = {f["key"]: f for f in entry["configFields"]}
    stored = stored or SplitConfig(plain={}, secret={})
    plain, secret = dict(stored.plain), dict(stored.secret)
    errors: dict[str, list[str]] = {}
    for key, value in incoming.items():
        field = fields.get(key)
        if field is None:
            errors[f"config.{key}"] = [f"Unknown field for {entry['name']}."]
            continue
        if field.get("managed") and not allow_managed:
            errors[f"config.{key}"] = ["Set by the OAuth authorization; it cannot be written."]
            continue
        target = secret if field["secret"] else plain
        if field["secret"] and keeps_stored(value):
            if key not in secret:
                errors[f"config.{key}"] = [NOTHING_TO_KEEP]
            continue  # keep what is stored
        if value is None or value == "":
            target.pop(key, None)
            continue
        try:
            target[key] = _coerce(field, value)
        except ValueError as exc:
            errors[f"config.{key}"] = [str(exc)]
    for key, field in fields.items():
        present = key in (secret if field["secret"] else plain)
        if field["required"] and not field.get("managed") and not present and f"config.{key}" not in errors:
            errors[f"config.{key}"] = ["This field is required."]
    if errors:
        raise ValidationFailed(errors)
    return SplitConfig(plain=plain, secret=secret)


def stored_config(integration) -> SplitConfig:
    return SplitConfig(plain=dict(integration.config or {}), secret=json.loads(integration.secrets or "{}"))


def redacted(entry: dict, split: SplitConfig) -> dict:
    """The config as reads show it: non-secret values, each stored secret as [REDACTED]."""
    public = {**split.plain, **{key: REDACTED for key in split.secret}}
    order = [f["key"] for f in entry["configFields"]]
    return {key: public[key] for key in order if key in public}


def value_of(entry: dict, split: SplitConfig, key: str):
    """A field's stored value, or its catalog default."""
    if key in split.secret:
        return split.secret[key]
    if key in split.plain:
        return split.plain[key]
    field = next((f for f in entry["configFields"] if f["key"] == key), None)
    return field.get("default") if field else None


def env_of(entry: dict, split: SplitConfig) -> dict[str, str]:
    """The variables the runtime gets: each field with an `env` name and a value (defaults
    included). Fields without `env` (an OAuth client secret, a refresh token) never leave Fleet."""
    env = {}
    for field in entry["configFields"]:
        if not field.get("env"):
            continue
        value = value_of(entry, split, field["key"])
        if value is None or value == "":
            continue
        env[field["env"]] = _as_env(value)
    return env


def _as_env(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(value)


def secret_values(split: SplitConfig) -> list[str]:
    """The secrets in clear, for scrubbing them out of messages."""
    return [str(v) for v in split.secret.values() if v]
