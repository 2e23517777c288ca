"""Standard Webhooks signatures (https://www.standardwebhooks.com/).

The signed content is "<webhook-id>.<webhook-timestamp>.<body>"; the signature header is
"v1,<base64 HMAC-SHA256>". The key comes from the channel secret (see channel_config.signing_key).
"""

from __future__ import annotations

import base64
import hashlib
import hmac

from .channel_config import signing_key


def webhook_signature(*, secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(signing_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signature_headers(*, secret: str | None, message_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """webhook-id and webhook-timestamp always; webhook-signature when the channel has a secret."""
    headers = {"webhook-id": message_id, "webhook-timestamp": str(timestamp)}
    if secret:
        headers["webhook-signature"] = webhook_signature(
            secret=secret, message_id=message_id, timestamp=timestamp, body=body
        )
    return headers
