"""Input fields and output shapes of the workspace routes (names exactly as the spec writes them)."""

from __future__ import annotations

from rest_framework import serializers

from .roles import Role


class RoleField(serializers.ChoiceField):
    """A role label in, a `Role` out."""

    def __init__(self, **kwargs):
        super().__init__(choices=[r.label for r in Role], **kwargs)

    def to_internal_value(self, data):
        return Role.parse(super().to_internal_value(data))


class WorkspaceOut(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    user_id = serializers.UUIDField(source="owner_id")
    created_at = serializers.DateTimeField()


class WorkspaceListItemOut(serializers.Serializer):
    """A row of `selectors.workspace_list` (a dict)."""

    id = serializers.UUIDField()
    name = serializers.CharField()
    user_id = serializers.UUIDField()
    created_at = serializers.DateTimeField()
    role = serializers.CharField()
    agent_count = serializers.IntegerField()
    member_count = serializers.IntegerField()


class MemberOut(serializers.Serializer):
    userId = serializers.UUIDField(source="user.id")  # noqa: N815 - the spec's name
    email = serializers.EmailField(source="user.email")
    name = serializers.CharField(source="user.name", allow_null=True)
    role = serializers.CharField()


class ApiKeyOut(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    scopes = serializers.ListField(child=serializers.CharField())
    prefix = serializers.CharField()
    created_by = serializers.UUIDField(source="created_by_id")
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(allow_null=True)


class ApiKeyCreatedOut(ApiKeyOut):
    """A new API key with its secret, which appears in this response only."""

    # The secret is never stored: the view passes it as context["key"].
    key = serializers.SerializerMethodField(help_text="The secret. Shown in this response only; store it now.")

    def get_key(self, api_key) -> str:
        return self.context["key"]
