"""Input and output shapes of the alerts API (field names as the spec writes them)."""

from __future__ import annotations

from rest_framework import serializers

from fleet.models import Event

from .channel_config import REDACTED, parse_channels
from .models import AlertRule, ChannelType
from .patterns import MAX_PATTERN_LENGTH, pattern_error

MAX_EVENTS_LIMIT, DEFAULT_EVENTS_LIMIT = 100, 50


class ChannelsField(serializers.Field):
    """The `channels` array, validated into ChannelSpecs (errors keyed "channels.<i>.<field>")."""

    def to_internal_value(self, data):
        return parse_channels(data)


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


class EventsQuery(serializers.Serializer):
    limit = serializers.IntegerField(min_value=1, max_value=MAX_EVENTS_LIMIT, default=DEFAULT_EVENTS_LIMIT)


def channel_out(channel) -> dict:
    out = {"type": channel.type, **channel.config}
    if channel.type == ChannelType.WEBHOOK and channel.secret:
        out["secret"] = REDACTED  # write-only: say that one is set, never what it is
    return out


def _iso(value) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def alert_rule_out(rule: AlertRule) -> dict:
    return {
        "id": str(rule.id),
        "workspaceId": str(rule.workspace_id),
        "createdBy": str(rule.created_by_id) if rule.created_by_id else None,
        "name": rule.name,
        "eventPattern": rule.event_pattern,
        "channels": [channel_out(c) for c in rule.channels.all()],
        "enabled": rule.enabled,
        "lastFiredAt": _iso(rule.last_fired_at),
        "lastError": rule.last_error,
        "createdAt": _iso(rule.created_at),
        "updatedAt": _iso(rule.updated_at),
    }


def event_out(event: Event) -> dict:
    return {
        "id": str(event.id),
        "type": event.kind,
        "occurredAt": _iso(event.occurred_at),
        "agentId": str(event.agent_id) if event.agent_id else None,
        "message": event.message,
        "data": event.data,
        "test": event.test,
    }
