"""Request and response shapes of /api/llm and /api/workspaces/:id/llm."""

from __future__ import annotations

from rest_framework import serializers

from fleet.api.fields import RawStringField, StrictCharField
from fleet.api.serializers import TimestampField

from .providers import IDS

# The sandbox route's bounds on a key (PUT /auth/provider-keys/:provider), as before the move.
MIN_SANDBOX_KEY, MAX_SANDBOX_KEY = 8, 512


class ProviderOut(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    kind = serializers.CharField(help_text="the wire format: openai, anthropic or google")
    baseUrl = serializers.CharField(allow_null=True, help_text="null: each key names its own (openai-compatible)")  # noqa: N815
    keyRequired = serializers.BooleanField()  # noqa: N815
    docsUrl = serializers.CharField()  # noqa: N815


class KeyTestResultOut(serializers.Serializer):
    ok = serializers.BooleanField()
    models = serializers.IntegerField(required=False, help_text="how many models the key lists")
    error = serializers.CharField(required=False, help_text="unauthorized, unreachable, unsafe_target, "
                                                            "invalid_response or http_<status>")


class KeyOut(serializers.Serializer):
    id = serializers.UUIDField()
    provider = serializers.CharField()
    label = serializers.CharField()
    apiKey = serializers.CharField(help_text="always [REDACTED] (\"\" when no key is stored)")  # noqa: N815
    baseUrl = serializers.CharField(allow_null=True)  # noqa: N815
    workspaceId = serializers.UUIDField(allow_null=True)  # noqa: N815
    createdAt = TimestampField()  # noqa: N815
    updatedAt = TimestampField()  # noqa: N815
    lastTestedAt = TimestampField(allow_null=True)  # noqa: N815
    lastTestResult = KeyTestResultOut(allow_null=True)  # noqa: N815


class KeyCreateInput(serializers.Serializer):
    provider = serializers.ChoiceField(choices=IDS)
    label = StrictCharField(max_length=100)
    apiKey = RawStringField(required=False, default="")  # noqa: N815
    baseUrl = RawStringField(required=False, allow_null=True, default=None)  # noqa: N815


class KeyUpdateInput(serializers.Serializer):
    label = StrictCharField(max_length=100, required=False)
    apiKey = RawStringField(required=False)  # noqa: N815
    baseUrl = RawStringField(required=False, allow_null=True)  # noqa: N815


class SandboxKeyInput(serializers.Serializer):
    key = RawStringField()

    def validate_key(self, value: str) -> str:
        if not MIN_SANDBOX_KEY <= len(value) <= MAX_SANDBOX_KEY:
            raise serializers.ValidationError(f"A provider key has {MIN_SANDBOX_KEY} to {MAX_SANDBOX_KEY} characters.")
        if any(c.isspace() for c in value):
            raise serializers.ValidationError("A provider key contains no whitespace.")
        return value


class SandboxKeyOut(serializers.Serializer):
    """A saved provider key, described without the key itself."""

    provider = serializers.CharField()
    configured = serializers.BooleanField()
    updatedAt = TimestampField(source="updated_at")  # noqa: N815 - the API's camelCase
