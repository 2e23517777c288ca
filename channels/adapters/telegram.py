"""Telegram Bot API: sendMessage out; webhook updates in, checked by the secret token header."""

from __future__ import annotations

import secrets as random_secrets

import requests
from django.conf import settings

from .base import Ignored, Inbound, SendResult, SignatureRefused, api_session, describe, header, same, timeout

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
INBOUND_SECRET = "webhookSecret"  # the config field that verifies inbound updates


def new_secret() -> str:
    """A secret_token for setWebhook: Telegram takes 1-256 of A-Z, a-z, 0-9, _ and -."""
    return random_secrets.token_urlsafe(32)


def send(config: dict, secrets: dict, text: str, target: str) -> SendResult:
    token = secrets.get("botToken") or ""
    if not target:
        return SendResult.failure("No chat to send to: set defaultChatId for test messages.")
    url = f"{settings.TELEGRAM_API_BASE_URL.rstrip('/')}/bot{token}/sendMessage"
    try:
        with api_session() as session:
            response = session.post(url, json={"chat_id": target, "text": text}, timeout=timeout())
        body = response.json() if response.content else {}
    except (requests.RequestException, ValueError) as exc:
        return SendResult.failure(f"Telegram request failed: {describe(exc)}", secrets=[token])
    if response.status_code != 200 or not body.get("ok"):
        return SendResult.failure(f"Telegram answered {response.status_code}: {body.get('description') or 'error'}",
                                  secrets=[token])
    return SendResult(True, detail={"message_id": (body.get("result") or {}).get("message_id")})


def verify(config: dict, secrets: dict, headers, body: bytes) -> None:
    expected = secrets.get(INBOUND_SECRET)
    if not expected or not same(header(headers, SECRET_HEADER), expected):
        raise SignatureRefused("The X-Telegram-Bot-Api-Secret-Token header does not match the channel's secret.")


def parse(payload: dict, headers):
    message = payload.get("message") or payload.get("edited_message") or payload.get("channel_post")
    update_id = payload.get("update_id")
    if not isinstance(message, dict):
        return Ignored("The update carries no message.")
    chat = message.get("chat") or {}
    text = message.get("text") or message.get("caption") or ""
    if not text or chat.get("id") is None:
        return Ignored("The message has no text.")
    sender = (message.get("from") or {})
    return Inbound(text=str(text), sender=str(chat["id"]),
                   update_id=str(update_id) if update_id is not None else "",
                   metadata={"chatId": chat["id"], "from": sender.get("username") or sender.get("id"),
                             "messageId": message.get("message_id")})
