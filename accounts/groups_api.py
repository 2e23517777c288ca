"""Platform-admin routes for user groups: /api/admin/user-groups (docs/api.md, "User groups")."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from fleet.api.fields import StrictCharField
from fleet.api.permissions import PlatformAdminOnly
from fleet.api.serializers import IntegerField, SuccessOut, TimestampField
from fleet.api.views import ApiView

from . import groups

ADMIN = (PlatformAdminOnly,)
MAX_MEMBERS_AT_CREATE = 1000


class UserGroupMemberOut(serializers.Serializer):
    id = serializers.UUIDField(source="user.id")
    email = serializers.EmailField(source="user.email")
    name = serializers.CharField(source="user.name", allow_null=True)
    addedAt = TimestampField(source="created_at")  # noqa: N815 - camelCase as the newer resources


class UserGroupOut(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    description = serializers.CharField()
    memberCount = IntegerField(source="member_count")  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815


class UserGroupDetailOut(UserGroupOut):
    members = serializers.SerializerMethodField()

    def get_members(self, group) -> list[dict]:
        return UserGroupMemberOut(groups.user_group_members(group=group), many=True).data


class UserGroupListApi(ApiView):
    request_examples = {
        "POST": {
            "A team": {"name": "platform-team", "description": "Runs the shared agents", "members": ["<user id>"]},
        },
    }
    access = {"GET": ADMIN, "POST": ADMIN}

    class InputSerializer(serializers.Serializer):
        name = StrictCharField(max_length=100)
        description = StrictCharField(max_length=500, required=False, allow_blank=True, default="")
        members = serializers.ListField(child=StrictCharField(), required=False, default=list,
                                        max_length=MAX_MEMBERS_AT_CREATE)

    @extend_schema(responses=UserGroupOut(many=True))
    def get(self, request):
        """User groups (platform admins)."""
        return Response(UserGroupOut(groups.user_group_list(), many=True).data)

    @extend_schema(request=InputSerializer, responses={201: UserGroupDetailOut})
    def post(self, request):
        """Create a user group."""
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        group = groups.user_group_create(
            name=data.validated_data["name"],
            description=data.validated_data["description"],
            member_ids=data.validated_data["members"],
        )
        return Response(UserGroupDetailOut(group).data, status=status.HTTP_201_CREATED)


class UserGroupDetailApi(ApiView):
    request_examples = {
        "PATCH": {
            "Describe it": {"description": "Runs the shared and the staging agents"},
        },
    }
    access = {"GET": ADMIN, "PATCH": ADMIN, "DELETE": ADMIN}

    class InputSerializer(serializers.Serializer):
        name = StrictCharField(max_length=100, required=False)
        description = StrictCharField(max_length=500, required=False, allow_blank=True)

    @extend_schema(responses=UserGroupDetailOut)
    def get(self, request, group_id):
        """One user group."""
        return Response(UserGroupDetailOut(groups.user_group_get(group_id=group_id)).data)

    @extend_schema(request=InputSerializer, responses=UserGroupDetailOut)
    def patch(self, request, group_id):
        """Rename a user group or change its description."""
        group = groups.user_group_get(group_id=group_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        group = groups.user_group_update(group=group, data=data.validated_data)
        return Response(UserGroupDetailOut(group).data)

    @extend_schema(responses={200: SuccessOut})
    def delete(self, request, group_id):
        """Delete a user group (its grants go with it)."""
        groups.user_group_delete(group=groups.user_group_get(group_id=group_id))
        return Response(SuccessOut({"success": True}).data)


class UserGroupMemberListApi(ApiView):
    request_examples = {
        "POST": {
            "Add by email": {"email": "grace@example.com"},
        },
    }
    access = {"GET": ADMIN, "POST": ADMIN}

    class InputSerializer(serializers.Serializer):
        userId = StrictCharField(required=False)  # noqa: N815
        email = StrictCharField(max_length=255, required=False)

    @extend_schema(responses=UserGroupMemberOut(many=True))
    def get(self, request, group_id):
        """The group's members."""
        group = groups.user_group_get(group_id=group_id)
        return Response(UserGroupMemberOut(groups.user_group_members(group=group), many=True).data)

    @extend_schema(request=InputSerializer, responses={201: UserGroupMemberOut, 200: UserGroupMemberOut})
    def post(self, request, group_id):
        """Add a user to the group."""
        group = groups.user_group_get(group_id=group_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        member, created = groups.user_group_member_add(
            group=group, user_id=data.validated_data.get("userId"), email=data.validated_data.get("email")
        )
        answer = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(UserGroupMemberOut(member).data, status=answer)


class UserGroupMemberDetailApi(ApiView):
    access = {"DELETE": ADMIN}

    @extend_schema(responses={200: SuccessOut})
    def delete(self, request, group_id, user_id):
        """Remove a user from the group."""
        groups.user_group_member_remove(group=groups.user_group_get(group_id=group_id), user_id=user_id)
        return Response(SuccessOut({"success": True}).data)
