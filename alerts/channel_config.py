"""Validation of a rule's channel objects (webhook and email) into stored channel specs.

Errors are DRF ValidationErrors keyed by position and field, so the error body names the
field exactly: {"channels.0.url": [...]}.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import validate_email
from rest_framework.exceptions import ValidationError

from fleet.netsafety import UnsafeTarget, check_url
from fleet.redaction import REDACTED, keeps_stored
from fleet.webhook_signing import signing_key

from .models import ChannelType

MIN_CHANNELS, MAX_CHANNELS = 1, 10
MIN_RECIPIENTS, MAX_RECIPIENTS = 1, 10
MAX_SUBJECT_PREFIX = 60
MAX_URL_LENGTH = 2048
MAX_HEADERS = 20
MAX_HEADER_VALUE = 1024
MIN_SECRET_BYTES, MAX_SECRET_LENGTH = 16, 512

# Hop-by-hop headers (RFC 9110 7.6.1) and those the transport itself sets.
FORBIDDEN_HEADERS = frozenset(
    {
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
        "te", "trailer", "trailers", "transfer-encoding", "upgrade", "host", "content-length",
        "webhook-id", "webhook-timestamp", "webhook-signature",
    }
)
_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,100}$")  # an RFC 9110 token
_WEBHOOK_FIELDS = {"type", "url", "headers", "secret"}
_EMAIL_FIELDS = {"type", "to", "subjectPrefix"}


@dataclass(frozen=True)
class ChannelSpec:
    """A validated channel: what is stored in AlertChannel (type, public config, secret)."""

    type: str
    config: dict = field(default_factory=dict)
    secret: str | None = None
    keep_secret: bool = False  # "[REDACTED]" was sent back: keep the stored secret of this url
    # Webhook header values are secrets too (an Authorization header): stored encrypted, apart
    # from `config`, whose "headers" names them with "[REDACTED]" values. Names sent back as
    # "[REDACTED]" keep the stored value of the same url and header.
    header_values: dict = field(default_factory=dict)
    kept_headers: frozenset = frozenset()


def parse_channels(value) -> list[ChannelSpec]:
    """The validated channel list, or a ValidationError naming each offending field."""
    if not isinstance(value, list):
        raise ValidationError(["Expected a list of channel objects."])
    if len(value) < MIN_CHANNELS:
        raise ValidationError(["A rule needs at least one channel."])
    if len(value) > MAX_CHANNELS:
        raise ValidationError([f"A rule has at most {MAX_CHANNELS} channels."])
    specs, errors = [], {}
    for position, raw in enumerate(value):
        try:
            specs.append(_parse_channel(raw))
        except ValidationError as exc:
            errors[str(position)] = exc.detail
    if errors:
        raise ValidationError(errors)
    return specs


def _parse_channel(raw) -> ChannelSpec:
    if not isinstance(raw, dict):
        raise ValidationError(["Expected a channel object."])
    kind = raw.get("type")
    if kind == ChannelType.WEBHOOK:
        return _parse_webhook(raw)
    if kind == ChannelType.EMAIL:
        return _parse_email(raw)
    if kind is None:
        raise ValidationError({"type": ["This field is required."]})
    raise ValidationError({"type": ["Unsupported channel type; use 'webhook' or 'email'."]})


def _unknown_fields(raw: dict, allowed: set[str]) -> dict:
    return {name: ["Unknown field for this channel type."] for name in raw if name not in allowed}


def _parse_webhook(raw: dict) -> ChannelSpec:
    errors = _unknown_fields(raw, _WEBHOOK_FIELDS)
    url, url_error = _webhook_url(raw.get("url"))
    if url_error:
        errors["url"] = [url_error]
    headers, header_errors = _webhook_headers(raw.get("headers"))
    if header_errors:
        errors["headers"] = header_errors
    secret, keep_secret, secret_error = _webhook_secret(raw.get("secret"))
    if secret_error:
        errors["secret"] = [secret_error]
    if errors:
        raise ValidationError(errors)
    public = {"url": url, "headers": {name: REDACTED for name in headers}}
    given = {name: value for name, value in headers.items() if not keeps_stored(value)}
    kept = frozenset(name for name, value in headers.items() if keeps_stored(value))
    return ChannelSpec(ChannelType.WEBHOOK, public, secret, keep_secret, given, kept)


def _webhook_url(url) -> tuple[str, str | None]:
    if url is None:
        return "", "This field is required."
    if not isinstance(url, str) or not url.strip():
        return "", "Enter a valid http or https URL."
    url = url.strip()
    if len(url) > MAX_URL_LENGTH:
        return url, f"Ensure this URL has no more than {MAX_URL_LENGTH} characters."
    try:
        check_url(url)
    except UnsafeTarget as exc:
        return url, str(exc) or "The URL is not an allowed outbound target."
    return url, None


def _webhook_headers(headers) -> tuple[dict, dict | list]:
    if headers is None:
        return {}, {}
    if not isinstance(headers, dict):
        return {}, ["Expected an object of header names to string values."]
    if len(headers) > MAX_HEADERS:
        return {}, [f"At most {MAX_HEADERS} headers."]
    errors: dict[str, list[str]] = {}
    seen: set[str] = set()
    for name, value in headers.items():
        lowered = name.lower()
        if not _HEADER_NAME.match(name):
            errors[name] = ["Not a valid header name."]
        elif lowered in FORBIDDEN_HEADERS:
            errors[name] = ["This header cannot be set on a webhook (hop-by-hop, Host or set by Fleet)."]
        elif lowered in seen:
            errors[name] = ["This header is given twice."]
        elif not isinstance(value, str):
            errors[name] = ["Header values must be strings."]
        elif len(value) > MAX_HEADER_VALUE or any(c in value for c in "\r\n\0"):
            errors[name] = [f"Header values are at most {MAX_HEADER_VALUE} characters, on one line."]
        elif not _is_latin1(value):  # HTTP sends header values as Latin-1: refuse now, not at delivery
            errors[name] = ["Header values may only hold Latin-1 characters."]
        seen.add(lowered)
    return (dict(headers), {}) if not errors else ({}, errors)


def _is_latin1(value: str) -> bool:
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return True


def _webhook_secret(secret) -> tuple[str | None, bool, str | None]:
    """(secret, keep_stored, error)."""
    if secret is None:
        return None, False, None
    if not isinstance(secret, str):
        return None, False, "Expected a string."
    if keeps_stored(secret):
        return None, True, None
    if len(secret) > MAX_SECRET_LENGTH:
        return None, False, f"Ensure the secret has no more than {MAX_SECRET_LENGTH} characters."
    try:
        key = signing_key(secret)
    except ValueError as exc:
        return None, False, str(exc)
    if len(key) < MIN_SECRET_BYTES:
        return None, False, f"The secret must hold at least {MIN_SECRET_BYTES} bytes of key material."
    return secret, False, None


def _parse_email(raw: dict) -> ChannelSpec:
    errors = _unknown_fields(raw, _EMAIL_FIELDS)
    recipients, to_errors = _email_recipients(raw.get("to"))
    if to_errors:
        errors["to"] = to_errors
    prefix = raw.get("subjectPrefix")
    if prefix is not None and not isinstance(prefix, str):
        errors["subjectPrefix"] = ["Expected a string."]
    elif prefix is not None and len(prefix.strip()) > MAX_SUBJECT_PREFIX:
        errors["subjectPrefix"] = [f"Ensure this field has no more than {MAX_SUBJECT_PREFIX} characters."]
    elif prefix is not None and any(c in prefix for c in "\r\n"):
        errors["subjectPrefix"] = ["The subject prefix must be on one line."]
    if errors:
        raise ValidationError(errors)
    config = {"to": recipients}
    if prefix is not None and prefix.strip():
        config["subjectPrefix"] = prefix.strip()
    return ChannelSpec(ChannelType.EMAIL, config)


def _email_recipients(value) -> tuple[list[str], list | dict]:
    if value is None:
        return [], ["This field is required."]
    if not isinstance(value, list):
        return [], ["Expected a list of email addresses."]
    if not MIN_RECIPIENTS <= len(value) <= MAX_RECIPIENTS:
        return [], [f"Give {MIN_RECIPIENTS} to {MAX_RECIPIENTS} email addresses."]
    recipients, errors = [], {}
    for i, address in enumerate(value):
        if not isinstance(address, str) or len(address) > 254:
            errors[str(i)] = ["Enter a valid email address."]
            continue
        try:
            validate_email(address.strip())
        except DjangoValidationError:
            errors[str(i)] = ["Enter a valid email address."]
            continue
        recipients.append(address.strip())
    return (recipients, {}) if not errors else ([], errors)
