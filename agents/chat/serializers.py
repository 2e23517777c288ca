"""Bodies of the chat routes."""

from __future__ import annotations

import re

from rest_framework import serializers

from fleet.api.fields import RawStringField

MESSAGE_MAX = 32_000  # characters of one message
SESSION_ID = re.compile(r"^[A-Za-z0-9:_.\-]{1,200}$")  # what both runtimes accept as a conversation id
# A message keeps its line breaks and tabs; other control characters are refused.
FORBIDDEN = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class ChatIn(serializers.Serializer):
    message = RawStringField()
    sessionId = RawStringField(required=False, allow_null=True)

    def validate_message(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("Say something: the message is empty.")
        if len(value) > MESSAGE_MAX:
            raise serializers.ValidationError(f"At most {MESSAGE_MAX} characters.")
        if FORBIDDEN.search(value):
            raise serializers.ValidationError("Control characters other than line breaks and tabs are not allowed.")
        return value

    def validate_sessionId(self, value: str | None) -> str | None:  # noqa: N802 - DRF names it after the field
        if value is not None and not SESSION_ID.match(value):
            raise serializers.ValidationError("A conversation id is 1 to 200 letters, digits and : _ . -")
        return value


class ChatUsageOut(serializers.Serializer):
    model = serializers.CharField()
    provider = serializers.CharField()
    inputTokens = serializers.IntegerField(source="input_tokens")
    outputTokens = serializers.IntegerField(source="output_tokens")
    costUsd = serializers.FloatField(source="cost_usd", allow_null=True)


class ChatSessionOut(serializers.Serializer):
    id = serializers.CharField()
    title = serializers.CharField()
    updatedAt = serializers.CharField(source="updated_at", allow_null=True)
    messageCount = serializers.IntegerField(source="message_count", allow_null=True)


class ChatMessageOut(serializers.Serializer):
    role = serializers.CharField()
    text = serializers.CharField()
    at = serializers.CharField(allow_null=True)
