"""Standard Webhooks (https://www.standardwebhooks.com/), one implementation for every app that
signs or verifies: alerts' webhook deliveries, the webhook channel's replies and its inbound
requests. The signed content is "<webhook-id>.<webhook-timestamp>.<body>"; the header is
"v1,<base64 HMAC-SHA256>", several separated by spaces. A secret "whsec_<base64>" is its decoded
bytes, and one that does not decode is refused (never signed with its text instead); any other
secret is its UTF-8 bytes."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets as random_secrets

SECRET_PREFIX = "whsec_"


def new_secret() -> str:
    """whsec_ and 32 random bytes in base64."""
    return SECRET_PREFIX + base64.b64encode(random_secrets.token_bytes(32)).decode()


def signing_key(secret: str) -> bytes:
    """The HMAC key of `secret`; ValueError for a whsec_ secret that is not base64."""
    if not secret.startswith(SECRET_PREFIX):
        return secret.encode("utf-8")
    try:
        return base64.b64decode(secret[len(SECRET_PREFIX):], validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("A secret starting with 'whsec_' must continue in base64.") from None


def signature(*, secret: str, message_id: str, timestamp: int | str, body: bytes) -> str:
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(signing_key(secret), signed, hashlib.sha256).digest()).decode()


def signature_matches(*, secret: str, message_id: str, timestamp: int | str, body: bytes, header: str) -> bool:
    """Whether one of the signatures of a webhook-signature header is ours (compared in constant time)."""
    try:
        expected = signature(secret=secret, message_id=message_id, timestamp=timestamp, body=body).encode()
    except ValueError:
        return False
    return any(hmac.compare_digest(expected, given.encode()) for given in header.split())
