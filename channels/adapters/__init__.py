"""The legacy adapters, by channel type. Each module has `send(config, secrets, text, target)`;
those that receive also `verify(config, secrets, headers, body)` (raises SignatureRefused) and
`parse(payload, headers)` (an Inbound, a Handshake or Ignored)."""

from __future__ import annotations

from types import ModuleType

from . import discord, email, slack, telegram, webhook
from .base import Handshake, Ignored, Inbound, SendResult, SignatureRefused

ADAPTERS: dict[str, ModuleType] = {
    "webhook": webhook, "telegram": telegram, "slack": slack, "discord": discord, "email": email,
}


def adapter_for(type_: str) -> ModuleType:
    return ADAPTERS[type_]


__all__ = ["ADAPTERS", "Handshake", "Ignored", "Inbound", "SendResult", "SignatureRefused", "adapter_for"]
