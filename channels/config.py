"""A channel's config checked against its type definition, split into public fields and secrets.

Secrets are stored apart (encrypted) and read back as "[REDACTED]"; sending "[REDACTED]" back
keeps the stored value. Errors name the field: {"config.botToken": ["This field is required."]}.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import validate_email

from fleet.errors import ValidationFailed
from fleet.redaction import NOTHING_TO_KEEP, keeps_stored, shown
from fleet.webhook_signing import SECRET_PREFIX, signing_key

from .definitions import ConfigField, Definition

MAX_TEXT = 2048
MAX_LIST_ITEMS = 100
MAX_LIST_ITEM = 256
MAX_JSON = 16 * 1024
MAX_RECIPIENTS = 10


@dataclass(frozen=True)
class CheckedConfig:
    public: dict
    secrets: dict


def redacted(public: dict, secrets: dict) -> dict:
    """What a read shows: the public fields, and "[REDACTED]" for every secret that is set."""
    return {**public, **{key: shown(value) for key, value in secrets.items() if shown(value)}}


def config_check(definition: Definition, raw, *, stored: CheckedConfig | None = None,
                 merge: bool = False) -> CheckedConfig:
    """The validated config. `stored` supplies the kept secrets ("[REDACTED]"); with `merge`
    (a PATCH), fields not sent keep their stored values and a null removes one."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ValidationFailed({"config": ["Expected an object of config fields."]})
    stored = stored or CheckedConfig({}, {})
    errors: dict[str, list[str]] = {}
    values: dict = {**stored.public, **stored.secrets} if merge else {}
    for key, value in raw.items():
        spec = definition.field(key)
        if spec is None:
            errors[f"config.{key}"] = [f"Unknown field for the {definition.type} channel type."]
            continue
        if value is None:
            values.pop(key, None)
            continue
        if spec.secret and keeps_stored(value):
            if stored.secrets.get(key) in (None, ""):
                errors[f"config.{key}"] = [NOTHING_TO_KEEP]
            else:
                values[key] = stored.secrets[key]
            continue
        try:
            values[key] = _coerce(spec, value)
        except ValueError as exc:
            errors[f"config.{key}"] = [str(exc)]
    for spec in definition.config_fields:
        if spec.key not in values and spec.default is not None:
            values[spec.key] = spec.default
    for spec in definition.config_fields:
        if _required(spec, values) and values.get(spec.key) in (None, "", []) and f"config.{spec.key}" not in errors:
            errors[f"config.{spec.key}"] = ["This field is required."]
    if errors:
        raise ValidationFailed(errors)
    secret_keys = set(definition.secret_keys)
    return CheckedConfig(
        public={k: v for k, v in values.items() if k not in secret_keys},
        secrets={k: v for k, v in values.items() if k in secret_keys},
    )


def _required(spec: ConfigField, values: dict) -> bool:
    if spec.required:
        return True
    if spec.required_when:
        return all(values.get(k) == v for k, v in spec.required_when.items())
    return False


def _coerce(spec: ConfigField, value):
    kind = spec.type
    if kind in ("text", "password", "url", "select"):
        if not isinstance(value, str):
            raise ValueError("Expected a string.")
        value = value.strip()
        if len(value) > MAX_TEXT:
            raise ValueError(f"Ensure this value has at most {MAX_TEXT} characters.")
        if kind == "password" and value.startswith(SECRET_PREFIX):
            signing_key(value)  # a Standard Webhooks secret that does not decode is refused here
        if kind == "url" and value:
            parts = urlsplit(value)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError("Enter a valid http or https URL.")
        if kind == "select" and value not in spec.options:
            raise ValueError(f"Choose one of: {', '.join(spec.options)}.")
        return value
    if kind == "boolean":
        if not isinstance(value, bool):
            raise ValueError("Expected true or false.")
        return value
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError("Expected an integer.")
        if not 0 <= value <= 65535:
            raise ValueError("Expected an integer from 0 to 65535.")
        return value
    if kind == "list":
        return _list(spec, value)
    if kind == "json":
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                raise ValueError("Expected a JSON object.") from None
        if not isinstance(value, dict):
            raise ValueError("Expected a JSON object.")
        if len(json.dumps(value)) > MAX_JSON:
            raise ValueError(f"Ensure this object is at most {MAX_JSON} bytes as JSON.")
        return value
    raise ValueError(f"Unsupported field type {kind!r}.")  # pragma: no cover - definitions are checked


def _list(spec: ConfigField, value) -> list:
    if isinstance(value, str):
        value = [item.strip() for item in value.split(",") if item.strip()]
    if not isinstance(value, list) or not all(isinstance(item, (str, int)) for item in value):
        raise ValueError("Expected a list of strings.")
    items = [str(item).strip() for item in value if str(item).strip()]
    limit = MAX_RECIPIENTS if spec.key == "to" else MAX_LIST_ITEMS
    if len(items) > limit:
        raise ValueError(f"At most {limit} items.")
    if any(len(item) > MAX_LIST_ITEM for item in items):
        raise ValueError(f"Each item has at most {MAX_LIST_ITEM} characters.")
    if spec.key == "to":  # email recipients
        for item in items:
            try:
                validate_email(item)
            except DjangoValidationError:
                raise ValueError(f"{item!r} is not a valid email address.") from None
    return items
