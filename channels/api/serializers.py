"""Input and output serializers of the channel routes (output shapes documented by the same class)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from fleet.api.serializers import TimestampField

from ..config import redacted
from ..models import LegacyChannel
from ..selectors import MESSAGES_DEFAULT, MESSAGES_MAX, inbound_url


class ChannelSaveIn(serializers.Serializer):
    type = serializers.CharField(max_length=40)
    config = serializers.JSONField(required=False)
    enabled = serializers.BooleanField(required=False)
    name = serializers.CharField(required=False, max_length=100, help_text="Legacy channels only.")


class ChannelPatchIn(serializers.Serializer):
    config = serializers.JSONField(required=False, help_text="Fields sent replace stored ones; null removes one.")
    enabled = serializers.BooleanField(required=False)
    name = serializers.CharField(required=False, max_length=100, help_text="Legacy channels only.")


class LoginWaitIn(serializers.Serializer):
    currentQrDataUrl = serializers.CharField(required=False, allow_blank=True, max_length=100_000)  # noqa: N815


class MessagesQuery(serializers.Serializer):
    limit = serializers.IntegerField(required=False, default=MESSAGES_DEFAULT, min_value=1, max_value=MESSAGES_MAX)


class ActionsOut(serializers.Serializer):
    canQrLogin = serializers.BooleanField()  # noqa: N815
    loginKind = serializers.ChoiceField(choices=("qr", "cli", "none"))  # noqa: N815
    canDelete = serializers.BooleanField()  # noqa: N815
    canLogout = serializers.BooleanField()  # noqa: N815


class CatalogRowOut(serializers.Serializer):
    id = serializers.CharField()
    type = serializers.CharField()
    name = serializers.CharField()
    configured = serializers.BooleanField()
    enabled = serializers.BooleanField()
    actions = ActionsOut()
    linked = serializers.BooleanField(allow_null=True)
    connected = serializers.BooleanField(allow_null=True)
    lastError = serializers.CharField(allow_null=True)  # noqa: N815
    live = serializers.BooleanField()
    available = serializers.BooleanField(help_text="False when the runtime image lacks the channel's plugin.")
    statusIssues = serializers.ListField(child=serializers.DictField(), help_text="The runtime's {kind, message, fix}.")  # noqa: N815


class LegacyChannelOut(serializers.Serializer):
    id = serializers.UUIDField()
    type = serializers.CharField()
    name = serializers.CharField()
    enabled = serializers.BooleanField()
    config = serializers.SerializerMethodField()
    inboundUrl = serializers.SerializerMethodField()  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815

    # Secrets are "[REDACTED]", except one Fleet generated in the save that answers (shown once).
    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_config(self, channel: LegacyChannel) -> dict:
        return {**redacted(channel.config or {}, channel.secret_values), **(channel.revealed_secrets or {})}

    # Null for a channel that only sends, and for one without its inbound secret.
    @extend_schema_field(OpenApiTypes.STR)
    def get_inboundUrl(self, channel: LegacyChannel) -> str | None:  # noqa: N802
        return inbound_url(channel)


class TypeLabelOut(serializers.Serializer):
    type = serializers.CharField()
    label = serializers.CharField()


class ChannelsPayloadOut(serializers.Serializer):
    runtime = serializers.ChoiceField(choices=("openclaw", "legacy"))
    title = serializers.CharField()
    description = serializers.CharField()
    capabilities = serializers.DictField(child=serializers.BooleanField())
    channels = serializers.SerializerMethodField()
    availableTypes = TypeLabelOut(many=True)  # noqa: N815
    live = serializers.BooleanField(help_text="openclaw: whether the runtime's live status is merged in.")

    # Catalog rows (CatalogRowOut) for openclaw, channel records (LegacyChannelOut) for legacy.
    @extend_schema_field(serializers.ListField(child=serializers.DictField()))
    def get_channels(self, payload) -> list:
        out = LegacyChannelOut if payload.runtime == "legacy" else CatalogRowOut
        return out(payload.channels, many=True).data


class ConfigFieldOut(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()
    type = serializers.CharField()
    required = serializers.BooleanField()
    requiredWhen = serializers.DictField(source="required_when", allow_null=True)  # noqa: N815
    default = serializers.JSONField(allow_null=True)
    options = serializers.ListField(child=serializers.CharField())
    secret = serializers.BooleanField()
    help = serializers.CharField()


class PluginOut(serializers.Serializer):
    package = serializers.CharField()
    bundled = serializers.BooleanField()


class TypeDefinitionOut(serializers.Serializer):
    runtime = serializers.CharField()
    type = serializers.CharField()
    label = serializers.CharField()
    description = serializers.CharField()
    configFields = ConfigFieldOut(source="config_fields", many=True)  # noqa: N815
    login = serializers.ChoiceField(choices=("qr", "cli", "none"))
    canLogout = serializers.BooleanField(source="can_logout")  # noqa: N815
    receives = serializers.BooleanField()
    plugin = PluginOut(allow_null=True)
    available = serializers.BooleanField()


class RuntimeSaveOut(serializers.Serializer):
    success = serializers.BooleanField()
    channel = CatalogRowOut()
    restart = serializers.ChoiceField(choices=("applied", "requested", "pending"))


class LoginOut(serializers.Serializer):
    status = serializers.CharField()
    message = serializers.CharField()
    qrDataUrl = serializers.CharField(source="qr_data_url", required=False, allow_null=True)  # noqa: N815
    expiresAt = TimestampField(source="expires_at", required=False, allow_null=True)  # noqa: N815


class LoginWaitOut(serializers.Serializer):
    connected = serializers.BooleanField()
    status = serializers.CharField()
    message = serializers.CharField()
    qrDataUrl = serializers.CharField(source="qr_data_url", required=False, allow_null=True)  # noqa: N815


class LogoutOut(serializers.Serializer):
    success = serializers.BooleanField()
    cleared = serializers.BooleanField()
    loggedOut = serializers.BooleanField()  # noqa: N815


class TestOut(serializers.Serializer):
    success = serializers.BooleanField()
    error = serializers.CharField(required=False)


class MessageOut(serializers.Serializer):
    id = serializers.UUIDField()
    direction = serializers.CharField()
    content = serializers.CharField()
    metadata = serializers.JSONField()
    state = serializers.CharField()
    created_at = TimestampField()


class ChallengeAnswerOut(serializers.Serializer):
    challenge = serializers.CharField()


class WebhookAcceptedOut(serializers.Serializer):
    received = serializers.BooleanField()
    messageId = serializers.UUIDField(allow_null=True)  # noqa: N815
