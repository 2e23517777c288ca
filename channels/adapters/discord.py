"""Discord: a bot posts to one channel (POST /channels/<id>/messages, "Authorization: Bot <token>").
Outbound only: Discord delivers messages to bots over its gateway, not to webhooks."""

from __future__ import annotations

import requests
from django.conf import settings

from .base import SendResult, api_session, describe, timeout


def send(config: dict, secrets: dict, text: str, target: str) -> SendResult:
    token = secrets.get("botToken") or ""
    channel = target or config.get("channelId") or ""
    url = f"{settings.DISCORD_API_BASE_URL.rstrip('/')}/channels/{channel}/messages"
    try:
        with api_session() as session:
            response = session.post(url, json={"content": text[:2000]}, timeout=timeout(),
                                    headers={"Authorization": f"Bot {token}"})
        body = response.json() if response.content else {}
    except (requests.RequestException, ValueError) as exc:
        return SendResult.failure(f"Discord request failed: {describe(exc)}", secrets=[token])
    if not 200 <= response.status_code < 300:
        message = body.get("message") if isinstance(body, dict) else None
        return SendResult.failure(f"Discord answered {response.status_code}: {message or 'error'}", secrets=[token])
    return SendResult(True, detail={"id": body.get("id") if isinstance(body, dict) else None})
