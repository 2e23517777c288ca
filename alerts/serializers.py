"""Input and output shapes of the alerts API (field names as the spec writes them)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from fleet.redaction import REDACTED

from .channel_config import MAX_CHANNELS, MAX_RECIPIENTS, MAX_SUBJECT_PREFIX, parse_channels
from .models import ChannelType
from .patterns import MAX_PATTERN_LENGTH, pattern_error

MAX_EVENTS_LIMIT, DEFAULT_EVENTS_LIMIT = 100, 50

_WEBHOOK_SCHEMA = {
    "type": "object",
    "required": ["type", "url"],
    "properties": {
        "type": {"type": "string", "enum": [ChannelType.WEBHOOK.value]},
        "url": {"type": "string", "format": "uri"},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
        "secret": {"type": "string", "writeOnly": True,
                   "description": f"Signing secret; read back as '{REDACTED}' when set."},
    },
}
_EMAIL_SCHEMA = {
    "type": "object",
    "required": ["type", "to"],
    "properties": {
        "type": {"type": "string", "enum": [ChannelType.EMAIL.value]},
        "to": {"type": "array", "items": {"type": "string", "format": "email"}, "minItems": 1,
               "maxItems": MAX_RECIPIENTS},
        "subjectPrefix": {"type": "string", "maxLength": MAX_SUBJECT_PREFIX},
    },
}
_CHANNELS_SCHEMA = {
    "type": "array",
    "minItems": 1,
    "maxItems": MAX_CHANNELS,
    "items": {"oneOf": [_WEBHOOK_SCHEMA, _EMAIL_SCHEMA]},
}


@extend_schema_field(_CHANNELS_SCHEMA)
class ChannelsField(serializers.Field):
    """The `channels` array: validated into ChannelSpecs on input (errors keyed
    "channels.<i>.<field>"), the rule's AlertChannel rows on output (secrets redacted)."""

    def to_internal_value(self, data):
        return parse_channels(data)

    def to_representation(self, channels):
        return [_channel_out(channel) for channel in channels.all()]


def _channel_out(channel) -> dict:
    out = {"type": channel.type, **channel.config}
    if channel.type == ChannelType.WEBHOOK and channel.secret:
        out["secret"] = REDACTED  # write-only: say that one is set, never what it is
    return out


class AlertRuleInput(serializers.Serializer):
    """POST body; PATCH uses it with partial=True (each given field, same rules)."""

    name = serializers.CharField(max_length=100, trim_whitespace=True)
    eventPattern = serializers.CharField(max_length=MAX_PATTERN_LENGTH, trim_whitespace=False)  # noqa: N815
    channels = ChannelsField()
    enabled = serializers.BooleanField(default=True)

    def validate_eventPattern(self, value: str) -> str:  # noqa: N802
        error = pattern_error(value)
        if error:
            raise serializers.ValidationError(error)
        return value

    def service_kwargs(self) -> dict:
        names = {"name": "name", "eventPattern": "event_pattern", "channels": "channels", "enabled": "enabled"}
        return {names[k]: v for k, v in self.validated_data.items()}


class AlertRuleOutput(serializers.Serializer):
    id = serializers.UUIDField()
    workspaceId = serializers.UUIDField(source="workspace_id")  # noqa: N815
    createdBy = serializers.UUIDField(source="created_by_id", allow_null=True)  # noqa: N815
    name = serializers.CharField()
    eventPattern = serializers.CharField(source="event_pattern")  # noqa: N815
    channels = ChannelsField()
    enabled = serializers.BooleanField()
    lastFiredAt = serializers.DateTimeField(source="last_fired_at", allow_null=True)  # noqa: N815
    lastError = serializers.CharField(source="last_error", allow_null=True)  # noqa: N815
    createdAt = serializers.DateTimeField(source="created_at")  # noqa: N815
    updatedAt = serializers.DateTimeField(source="updated_at")  # noqa: N815


class EventsQuery(serializers.Serializer):
    limit = serializers.IntegerField(min_value=1, max_value=MAX_EVENTS_LIMIT, default=DEFAULT_EVENTS_LIMIT)


class EventOutput(serializers.Serializer):
    id = serializers.UUIDField()
    type = serializers.CharField(source="kind")
    occurredAt = serializers.DateTimeField(source="occurred_at")  # noqa: N815
    agentId = serializers.UUIDField(source="agent_id", allow_null=True)  # noqa: N815
    message = serializers.CharField()
    data = serializers.JSONField()
    test = serializers.BooleanField()
    actor = serializers.CharField(help_text="Who caused it: the e-mail of the signed-in user, with \"(API key)\" "
                                            "after it for a workspace key; empty for Fleet's own work.")
