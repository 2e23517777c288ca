"""Workspace, member and API-key routes. Who may call what is in docs/api.md (Workspaces).

Each view declares its access per method (fleet.api.views.ApiView); `WorkspaceRole` resolves
the workspace and the caller's role once and leaves it on `request.workspace_access`.
"""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from fleet.api.fields import StrictCharField
from fleet.api.permissions import IsAuthenticated, RequireScope, SessionOnly
from fleet.api.serializers import SuccessOut
from fleet.api.throttling import throttle
from fleet.api.views import ApiView

from . import selectors, services
from .access import WorkspaceRole
from .roles import Role, Scope
from .serializers import (
    ApiKeyCreatedOut,
    ApiKeyOut,
    MemberOut,
    RoleField,
    WorkspaceListItemOut,
    WorkspaceOut,
)


class WorkspaceListApi(ApiView):
    access = {
        "GET": (IsAuthenticated, RequireScope(Scope.WORKSPACES_READ)),
        "POST": (SessionOnly,),
    }

    class InputSerializer(serializers.Serializer):
        name = StrictCharField(max_length=100)

    @extend_schema(responses=WorkspaceListItemOut(many=True))
    def get(self, request):
        rows = selectors.workspace_list(principal=self.principal)
        return Response(WorkspaceListItemOut(rows, many=True).data)

    @extend_schema(request=InputSerializer, responses={201: WorkspaceOut})
    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        workspace = services.workspace_create(owner=self.principal.user, name=data.validated_data["name"])
        return Response(WorkspaceOut(workspace).data, status=status.HTTP_201_CREATED)


class WorkspaceDetailApi(ApiView):
    access = {
        "GET": (WorkspaceRole(Role.VIEWER, key_scope=Scope.WORKSPACES_READ),),
        "DELETE": (WorkspaceRole(Role.OWNER, session_only=True),),
    }

    @extend_schema(responses=WorkspaceListItemOut)
    def get(self, request, workspace_id):
        access = request.workspace_access
        row = selectors.workspace_summary(workspace=access.workspace, role=access.role)
        return Response(WorkspaceListItemOut(row).data)

    @extend_schema(responses={200: SuccessOut})
    def delete(self, request, workspace_id):
        services.workspace_delete(workspace=request.workspace_access.workspace)
        return Response(SuccessOut({"success": True}).data)


class MemberListApi(ApiView):
    documented_errors = {"POST": (409,)}
    access = {
        "GET": (WorkspaceRole(Role.VIEWER, key_scope=Scope.WORKSPACES_READ),),
        "POST": (WorkspaceRole(Role.ADMIN, session_only=True),),
    }

    class InputSerializer(serializers.Serializer):
        email = StrictCharField(max_length=255)
        role = RoleField()

    @extend_schema(responses=MemberOut(many=True))
    def get(self, request, workspace_id):
        members = selectors.membership_list(workspace=request.workspace_access.workspace)
        return Response(MemberOut(members, many=True).data)

    @extend_schema(request=InputSerializer, responses={201: MemberOut})
    def post(self, request, workspace_id):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        # 404 against 201/409 tells whether an email has an account: bound how fast anyone asks.
        throttle("member_add_user", self.principal.user.pk, settings.MEMBER_ADD_RATE_PER_USER)
        throttle("member_add_workspace", request.workspace_access.workspace.pk, settings.MEMBER_ADD_RATE_PER_WORKSPACE)
        membership = services.membership_add(
            workspace=request.workspace_access.workspace,
            acting_role=request.workspace_access.role,
            email=data.validated_data["email"],
            role=data.validated_data["role"],
        )
        return Response(MemberOut(membership).data, status=status.HTTP_201_CREATED)


class MemberDetailApi(ApiView):
    documented_errors = (409,)
    access = {
        "PATCH": (WorkspaceRole(Role.ADMIN, session_only=True),),
        # Any member may leave; removing someone else needs admin (checked by the service).
        "DELETE": (WorkspaceRole(Role.VIEWER, session_only=True),),
    }

    class InputSerializer(serializers.Serializer):
        role = RoleField()

    @extend_schema(request=InputSerializer, responses=MemberOut)
    def patch(self, request, workspace_id, user_id):
        access = request.workspace_access
        membership = selectors.membership_get(workspace=access.workspace, user_id=user_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        membership = services.membership_update(
            membership=membership, acting_role=access.role, role=data.validated_data["role"]
        )
        return Response(MemberOut(membership).data)

    @extend_schema(responses={200: SuccessOut})
    def delete(self, request, workspace_id, user_id):
        access = request.workspace_access
        membership = selectors.membership_get(workspace=access.workspace, user_id=user_id)
        services.membership_remove(membership=membership, acting_user=self.principal.user, acting_role=access.role)
        return Response(SuccessOut({"success": True}).data)


class ApiKeyListApi(ApiView):
    access = {
        "GET": (WorkspaceRole(Role.ADMIN, session_only=True),),
        "POST": (WorkspaceRole(Role.ADMIN, session_only=True),),
    }

    class InputSerializer(serializers.Serializer):
        name = StrictCharField(max_length=100)
        scopes = serializers.ListField(child=StrictCharField(), allow_empty=False, max_length=len(Scope.ALL) * 2)

    @extend_schema(responses=ApiKeyOut(many=True))
    def get(self, request, workspace_id):
        keys = selectors.api_key_list(workspace=request.workspace_access.workspace)
        return Response(ApiKeyOut(keys, many=True).data)

    @extend_schema(request=InputSerializer, responses={201: ApiKeyCreatedOut})
    def post(self, request, workspace_id):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        key, raw = services.api_key_create(
            workspace=request.workspace_access.workspace,
            created_by=self.principal.user,
            name=data.validated_data["name"],
            scopes=data.validated_data["scopes"],
        )
        return Response(ApiKeyCreatedOut(key, context={"key": raw}).data, status=status.HTTP_201_CREATED)


class ApiKeyDetailApi(ApiView):
    access = {"DELETE": (WorkspaceRole(Role.ADMIN, session_only=True),)}

    @extend_schema(responses={200: SuccessOut})
    def delete(self, request, workspace_id, key_id):
        key = selectors.api_key_get(workspace=request.workspace_access.workspace, key_id=key_id)
        services.api_key_revoke(api_key=key)
        return Response(SuccessOut({"success": True}).data)
