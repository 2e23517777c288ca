"""The audit routes' query and rows (docs/api.md "Audit log")."""

from __future__ import annotations

from rest_framework import serializers

from .selectors import AuditFilter

DEFAULT_LIMIT, MAX_LIMIT = 50, 200
FORMATS = ("csv", "json")


class AuditQuery(serializers.Serializer):
    actor = serializers.CharField(required=False, max_length=300, help_text="A user's id, or an e-mail's start.")
    action = serializers.CharField(required=False, max_length=100, help_text="Exact, or a prefix ending in '.'.")
    targetType = serializers.CharField(required=False, max_length=60)  # noqa: N815
    targetId = serializers.CharField(required=False, max_length=100)  # noqa: N815
    result = serializers.CharField(required=False, max_length=60)
    since = serializers.DateTimeField(required=False, help_text="From this moment (included).")
    until = serializers.DateTimeField(required=False, help_text="Before this moment.")
    cursor = serializers.CharField(required=False, max_length=200, help_text="The previous page's nextCursor.")
    limit = serializers.IntegerField(required=False, min_value=1, max_value=MAX_LIMIT, default=DEFAULT_LIMIT)
    format = serializers.ChoiceField(required=False, choices=FORMATS, help_text="The whole selection, streamed.")

    def validate(self, attrs):
        since, until = attrs.get("since"), attrs.get("until")
        if since and until and until <= since:
            raise serializers.ValidationError({"until": ["Must be after since."]})
        return attrs

    def audit_filter(self) -> AuditFilter:
        data = self.validated_data
        return AuditFilter(actor=data.get("actor", ""), action=data.get("action", ""),
                           target_type=data.get("targetType", ""), target_id=data.get("targetId", ""),
                           result=data.get("result", ""), since=data.get("since"), until=data.get("until"))


class AuditEntryOut(serializers.Serializer):
    id = serializers.IntegerField()
    at = serializers.DateTimeField()
    actor = serializers.CharField(source="actor_label")
    actorUserId = serializers.UUIDField(source="actor_user_id", allow_null=True)  # noqa: N815
    actorKeyId = serializers.UUIDField(source="actor_key_id", allow_null=True)  # noqa: N815
    actorIp = serializers.IPAddressField(source="actor_ip", allow_null=True)  # noqa: N815
    source = serializers.CharField()
    action = serializers.CharField()
    targetType = serializers.CharField(source="target_type")  # noqa: N815
    targetId = serializers.CharField(source="target_id")  # noqa: N815
    workspaceId = serializers.UUIDField(source="workspace_id", allow_null=True)  # noqa: N815
    result = serializers.CharField()
    detail = serializers.ListField(child=serializers.CharField())


class AuditPageOut(serializers.Serializer):
    items = AuditEntryOut(many=True)
    nextCursor = serializers.CharField(allow_null=True)  # noqa: N815
