"""Standard Webhooks signatures (https://www.standardwebhooks.com/).

The signed content is "<webhook-id>.<webhook-timestamp>.<body>"; the signature header is
"v1,<base64 HMAC-SHA256>" (fleet.webhook_signing, shared with the webhook channel).
"""

from __future__ import annotations

from fleet.webhook_signing import signature as webhook_signature


def signature_headers(*, secret: str | None, message_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """webhook-id and webhook-timestamp always; webhook-signature when the channel has a secret."""
    headers = {"webhook-id": message_id, "webhook-timestamp": str(timestamp)}
    if secret:
        headers["webhook-signature"] = webhook_signature(
            secret=secret, message_id=message_id, timestamp=timestamp, body=body
        )
    return headers
