"""The legacy adapters, by channel type. Each module has `send(config, secrets, text, target)`;
those that receive also `verify(config, secrets, headers, body)` (raises SignatureRefused, also
when the channel has no secret: nothing is accepted unsigned), `parse(payload, headers)` (an
Inbound, a ChallengeAnswer or Ignored), `INBOUND_SECRET` (the secret config field `verify` checks
with) and, where Fleet may choose that secret itself, `new_secret()`."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

from . import discord, email, slack, telegram, webhook
from .base import ChallengeAnswer, Ignored, Inbound, SendResult, SignatureRefused

ADAPTERS: dict[str, ModuleType] = {
    "webhook": webhook, "telegram": telegram, "slack": slack, "discord": discord, "email": email,
}


def adapter_for(type_: str) -> ModuleType:
    return ADAPTERS[type_]


def recipient_count(type_: str, config: dict, target: str) -> int:
    """How many destinations a send reaches: each email address; one chat, channel or URL."""
    addressed = getattr(ADAPTERS[type_], "recipients", None)
    return len(addressed(config, target)) if addressed else 1


def inbound_secret_field(type_: str) -> str | None:
    """The secret config field that verifies the type's inbound requests (None: it only sends)."""
    return getattr(ADAPTERS.get(type_), "INBOUND_SECRET", None)


def inbound_secret_generator(type_: str) -> Callable[[], str] | None:
    """What makes a fresh inbound secret for the type; None when the provider issues it (Slack)."""
    return getattr(ADAPTERS.get(type_), "new_secret", None)


__all__ = ["ADAPTERS", "ChallengeAnswer", "Ignored", "Inbound", "SendResult", "SignatureRefused", "adapter_for",
           "inbound_secret_field", "inbound_secret_generator", "recipient_count"]
