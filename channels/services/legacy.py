"""Legacy channels (Hermes agents): rows Fleet runs itself through channels.adapters."""

from __future__ import annotations

from django.db import transaction

from agents.models import Agent
from fleet.errors import ValidationFailed
from fleet.netsafety import UnsafeTarget, check_url

from ..adapters import SendResult, adapter_for, inbound_secret_field, inbound_secret_generator, recipient_count
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


def _with_inbound_secret(type_: str, checked: CheckedConfig) -> tuple[CheckedConfig, dict[str, str]]:
    """A receiving channel verifies every inbound request: when the save leaves it without its
    secret and Fleet may choose one (Telegram's secret_token, a Standard Webhooks secret), one
    is generated, to be shown once. Slack's signing secret is Slack's: without it the channel
    refuses inbound (409 inbound_secret_missing) until it is set."""
    field = inbound_secret_field(type_)
    if not field or checked.secrets.get(field):
        return checked, {}
    generate = inbound_secret_generator(type_)
    if generate is None:
        return checked, {}
    value = generate()
    return CheckedConfig(public=checked.public, secrets={**checked.secrets, field: value}), {field: value}


@transaction.atomic
def legacy_channel_create(*, agent: Agent, type_: str, config=None, enabled: bool = True,
                          name=None) -> LegacyChannel:
    require_legacy(agent)
    if not isinstance(type_, str) or not type_:
        raise ValidationFailed({"type": ["This field is required."]})
    definition = definition_of(agent, type_)
    channel = LegacyChannel(agent=agent, type=type_, name=_name(name, definition.label), enabled=enabled)
    checked, channel.revealed_secrets = _with_inbound_secret(type_, _checked(definition, config, stored=None,
                                                                              merge=False))
    channel.store(checked)
    channel.save()
    return channel


@transaction.atomic
def legacy_channel_update(*, channel: LegacyChannel, config=None, enabled: bool | None = None,
                          name=None) -> LegacyChannel:
    channel = LegacyChannel.objects.select_for_update().get(pk=channel.pk)
    definition = definition_of(channel.agent, channel.type)
    checked = channel.checked if config is None else _checked(definition, config, stored=channel.checked,
                                                                merge=True)
    # Any save completes a channel stored without its secret (as earlier releases allowed), or whose
    # secret the caller removed (null): a new one, shown once.
    checked, channel.revealed_secrets = _with_inbound_secret(channel.type, checked)
    if config is not None or channel.revealed_secrets:
        channel.store(checked)
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


def legacy_channel_test_recipients(*, channel: LegacyChannel) -> int:
    """How many destinations the channel's test message reaches (for the relay rule)."""
    return recipient_count(channel.type, channel.config or {}, default_target(channel))


def legacy_channel_test(*, channel: LegacyChannel) -> SendResult:
    """A real test message through the adapter, kept in the history as outbound."""
    result = legacy_channel_send(channel=channel, text=TEST_MESSAGE, target=default_target(channel))
    ChannelMessage.objects.create(
        channel=channel, direction=Direction.OUTBOUND, content=TEST_MESSAGE,
        metadata={"test": True, **({"error": result.error} if result.error else {})},
        state=MessageState.SENT if result.succeeded else MessageState.FAILED, error=result.error,
        sender=default_target(channel),
    )
    return result
