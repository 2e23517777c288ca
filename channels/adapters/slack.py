"""Slack: chat.postMessage out; Events API requests in, checked by the signing secret
(X-Slack-Signature = v0=HMAC-SHA256(secret, "v0:<timestamp>:<body>"), at most 5 minutes old)."""

from __future__ import annotations

import hashlib
import hmac
import time

import requests
from django.conf import settings

from .base import (
    ChallengeAnswer,
    Ignored,
    Inbound,
    SendResult,
    SignatureRefused,
    api_session,
    describe,
    header,
    same,
    timeout,
)

MAX_AGE_SECONDS = 300
# The config field that verifies inbound requests. Slack issues it (the app's Basic Information),
# so Fleet cannot generate it: without it the channel receives nothing.
INBOUND_SECRET = "signingSecret"


def send(config: dict, secrets: dict, text: str, target: str) -> SendResult:
    token = secrets.get("botToken") or ""
    if not target:
        return SendResult.failure("No Slack channel to send to: set defaultChannel for test messages.")
    url = f"{settings.SLACK_API_BASE_URL.rstrip('/')}/chat.postMessage"
    try:
        with api_session() as session:
            response = session.post(url, json={"channel": target, "text": text}, timeout=timeout(),
                                    headers={"Authorization": f"Bearer {token}"})
        body = response.json() if response.content else {}
    except (requests.RequestException, ValueError) as exc:
        return SendResult.failure(f"Slack request failed: {describe(exc)}", secrets=[token])
    if response.status_code != 200 or not body.get("ok"):
        return SendResult.failure(f"Slack answered {response.status_code}: {body.get('error') or 'error'}",
                                  secrets=[token])
    return SendResult(True, detail={"ts": body.get("ts")})


def signature(secret: str, timestamp: str, body: bytes) -> str:
    signed = f"v0:{timestamp}:".encode() + body
    return "v0=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def verify(config: dict, secrets: dict, headers, body: bytes) -> None:
    secret = secrets.get(INBOUND_SECRET)
    if not secret:  # never unsigned (the service answers 409 inbound_secret_missing first)
        raise SignatureRefused("The channel has no signing secret to verify the request with.")
    timestamp = header(headers, "X-Slack-Request-Timestamp")
    given = header(headers, "X-Slack-Signature")
    try:
        fresh = abs(time.time() - int(timestamp)) <= MAX_AGE_SECONDS
    except ValueError:
        fresh = False
    if not fresh or not given or not same(given, signature(secret, timestamp, body)):
        raise SignatureRefused("The Slack signature is missing, stale or does not match the signing secret.")


def parse(payload: dict, headers):
    if payload.get("type") == "url_verification":
        return ChallengeAnswer({"challenge": str(payload.get("challenge") or "")})
    event = payload.get("event") or {}
    if payload.get("type") != "event_callback" or event.get("type") not in ("message", "app_mention"):
        return Ignored("Not a message event.")
    if event.get("bot_id") or event.get("subtype"):  # our own replies come back as bot messages
        return Ignored("A bot message or an edit.")
    if not event.get("text") or not event.get("channel"):
        return Ignored("The message has no text.")
    return Inbound(text=str(event["text"]), sender=str(event["channel"]),
                   update_id=str(payload.get("event_id") or ""),
                   metadata={"channel": event["channel"], "user": event.get("user"), "ts": event.get("ts")})
