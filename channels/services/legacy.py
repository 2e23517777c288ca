"""Legacy channels (Hermes agents): rows Fleet runs itself through channels.adapters."""

from __future__ import annotations

from django.db import transaction

from agents.models import Agent
from fleet.errors import ValidationFailed
from fleet.netsafety import UnsafeTarget, check_url

from ..adapters import SendResult, adapter_for
from ..config import CheckedConfig, config_check
from ..definitions import Definition
from ..models import ChannelMessage, Direction, LegacyChannel, MessageState
from .common import definition_of, require_legacy

MAX_NAME = 100
TEST_MESSAGE = "Test message from Fleet: this channel works."


def _name(value, default: str) -> str:
    if value is None:
        return default
    if not isinstance(value, str) or not value.strip():
        raise ValidationFailed({"name": ["Expected a non-empty string."]})
    if len(value.strip()) > MAX_NAME:
        raise ValidationFailed({"name": [f"Ensure this field has no more than {MAX_NAME} characters."]})
    return value.strip()


def _checked(definition: Definition, raw, *, stored: CheckedConfig | None, merge: bool) -> CheckedConfig:
    checked = config_check(definition, raw, stored=stored, merge=merge)
    url = checked.public.get("url")
    if definition.type == "webhook" and url:
        try:
            check_url(url)  # again at send time, on the resolved address
        except UnsafeTarget as exc:
            raise ValidationFailed({"config.url": [str(exc) or "The URL is not an allowed outbound target."]}) from None
    return checked


@transaction.atomic
def legacy_channel_create(*, agent: Agent, type_: str, config=None, enabled: bool = True,
                          name=None) -> LegacyChannel:
    require_legacy(agent)
    if not isinstance(type_, str) or not type_:
        raise ValidationFailed({"type": ["This field is required."]})
    definition = definition_of(agent, type_)
    channel = LegacyChannel(agent=agent, type=type_, name=_name(name, definition.label), enabled=enabled)
    channel.store(_checked(definition, config, stored=None, merge=False))
    channel.save()
    return channel


@transaction.atomic
def legacy_channel_update(*, channel: LegacyChannel, config=None, enabled: bool | None = None,
                          name=None) -> LegacyChannel:
    channel = LegacyChannel.objects.select_for_update().get(pk=channel.pk)
    definition = definition_of(channel.agent, channel.type)
    if config is not None:
        channel.store(_checked(definition, config, stored=channel.checked, merge=True))
    if enabled is not None:
        channel.enabled = enabled
    if name is not None:
        channel.name = _name(name, channel.name)
    channel.save()
    return channel


def legacy_channel_delete(*, channel: LegacyChannel) -> None:
    channel.delete()


def legacy_channel_send(*, channel: LegacyChannel, text: str, target: str = "") -> SendResult:
    """Send `text` through the channel's adapter (never raises; the result says how it went)."""
    return adapter_for(channel.type).send(channel.config or {}, channel.secret_values, text, target)


def default_target(channel: LegacyChannel) -> str:
    config = channel.config or {}
    return str(config.get("defaultChatId") or config.get("defaultChannel") or "")


def legacy_channel_test(*, channel: LegacyChannel) -> SendResult:
    """A real test message through the adapter, kept in the history as outbound."""
    result = legacy_channel_send(channel=channel, text=TEST_MESSAGE, target=default_target(channel))
    ChannelMessage.objects.create(
        channel=channel, direction=Direction.OUTBOUND, content=TEST_MESSAGE,
        metadata={"test": True, **({"error": result.error} if result.error else {})},
        state=MessageState.SENT if result.success else MessageState.FAILED, error=result.error,
        sender=default_target(channel),
    )
    return result
