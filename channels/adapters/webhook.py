"""Generic webhook: replies POSTed as JSON to the channel's URL (through fleet.netsafety, signed
with the Standard Webhooks scheme when a secret is set); inbound JSON `{text, sender?, id?}`
verified by the same scheme."""

from __future__ import annotations

import json
import time
import uuid

import requests

from fleet.netsafety import UnsafeTarget, safe_session
from fleet.webhook_signing import new_secret, signature, signature_matches

from .base import Ignored, Inbound, SendResult, SignatureRefused, describe, header, timeout

__all__ = ["new_secret", "parse", "send", "signature", "verify"]  # new_secret: the adapter's secret maker

MAX_AGE_SECONDS = 300
INBOUND_SECRET = "secret"  # the config field that verifies inbound requests (and signs replies)


def send(config: dict, secrets: dict, text: str, target: str) -> SendResult:
    body = json.dumps({"text": text, "recipient": target or None}).encode()
    message_id, timestamp = f"msg_{uuid.uuid4().hex}", str(int(time.time()))
    headers = {"Content-Type": "application/json", "webhook-id": message_id, "webhook-timestamp": timestamp}
    if secrets.get("secret"):
        try:
            headers["webhook-signature"] = signature(secret=secrets["secret"], message_id=message_id,
                                                     timestamp=timestamp, body=body)
        except ValueError as exc:  # stored before secrets were checked: refused, never signed otherwise
            return SendResult.failure(str(exc))
    try:
        with safe_session() as session:
            response = session.post(config.get("url") or "", data=body, headers=headers, timeout=timeout())
    except UnsafeTarget as exc:
        return SendResult.failure(f"Refused unsafe target: {exc}")
    except requests.RequestException as exc:
        return SendResult.failure(f"Request failed: {describe(exc)}")
    if not 200 <= response.status_code < 300:
        return SendResult.failure(f"HTTP {response.status_code} {response.reason or ''}".strip())
    return SendResult(True)


def verify(config: dict, secrets: dict, headers, body: bytes) -> None:
    secret = secrets.get(INBOUND_SECRET)
    if not secret:  # never unsigned (the service answers 409 inbound_secret_missing first)
        raise SignatureRefused("The channel has no secret to verify the request with.")
    message_id, timestamp = header(headers, "webhook-id"), header(headers, "webhook-timestamp")
    try:
        fresh = abs(time.time() - int(timestamp)) <= MAX_AGE_SECONDS
    except ValueError:
        fresh = False
    if not (message_id and fresh and signature_matches(secret=secret, message_id=message_id, timestamp=timestamp,
                                                        body=body, header=header(headers, "webhook-signature"))):
        raise SignatureRefused("The webhook signature is missing, stale or does not match the channel's secret.")


def parse(payload: dict, headers):
    text = payload.get("text") or payload.get("message") or payload.get("content")
    if not isinstance(text, str) or not text.strip():
        return Ignored("No text in the payload.")
    sender = payload.get("sender") or payload.get("from") or "webhook"
    update_id = payload.get("id") or header(headers, "webhook-id")
    return Inbound(text=text, sender=str(sender)[:255], update_id=str(update_id or "")[:255],
                   metadata={k: payload[k] for k in ("sender", "id") if k in payload})
