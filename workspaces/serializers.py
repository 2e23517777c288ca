"""Input fields and output shapes of the workspace routes (names exactly as the spec writes them)."""

from __future__ import annotations

from rest_framework import serializers

from fleet.api.fields import StrictCharField

from .roles import Role, Scope


class RoleField(serializers.ChoiceField):
    """A role label in, a `Role` out."""

    def __init__(self, **kwargs):
        super().__init__(choices=[r.label for r in Role], **kwargs)

    def to_internal_value(self, data):
        return Role.parse(super().to_internal_value(data))


class ApiKeyInput(serializers.Serializer):
    """A new workspace API key (the route's body and the console's form)."""

    name = StrictCharField(max_length=100)
    scopes = serializers.ListField(child=StrictCharField(), allow_empty=False, max_length=len(Scope.ALL) * 2)


class WorkspaceOut(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    user_id = serializers.UUIDField(source="owner_id")
    created_at = serializers.DateTimeField()


class WorkspaceListItemOut(serializers.Serializer):
    """A workspace with the caller's role in it and its counts."""

    # Reads a selectors.WorkspaceSummary.
    id = serializers.UUIDField(source="workspace.id")
    name = serializers.CharField(source="workspace.name")
    user_id = serializers.UUIDField(source="workspace.owner_id")
    created_at = serializers.DateTimeField(source="workspace.created_at")
    role = serializers.CharField(source="role.label")
    agent_count = serializers.IntegerField(source="workspace.agent_count")
    member_count = serializers.IntegerField(source="workspace.member_count")


class MemberOut(serializers.Serializer):
    userId = serializers.UUIDField(source="user.id")  # noqa: N815 - the spec's name
    email = serializers.EmailField(source="user.email")
    name = serializers.CharField(source="user.name", allow_null=True)
    role = serializers.CharField()


class InvitationOut(serializers.Serializer):
    """The same shape for the inviting admin and for the invitee, whoever the email belongs to."""

    id = serializers.UUIDField()
    workspaceId = serializers.UUIDField(source="workspace.id")  # noqa: N815
    workspaceName = serializers.CharField(source="workspace.name")  # noqa: N815
    email = serializers.CharField()
    role = serializers.CharField()
    invitedBy = serializers.CharField(source="invited_by.email", allow_null=True, default=None)  # noqa: N815
    createdAt = serializers.DateTimeField(source="created_at")  # noqa: N815
    expiresAt = serializers.DateTimeField(source="expires_at")  # noqa: N815


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
