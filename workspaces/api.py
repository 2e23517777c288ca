"""Workspace, member and API-key routes. Who may call what is in docs/api.md (Workspaces).

Each view names its access per method; `WorkspaceRole` resolves the workspace and the
caller's role once and leaves it on `request.workspace_access`.
"""

from __future__ import annotations

import unicodedata

from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from fleet.api.permissions import IsAuthenticated, RequireScope, SessionOnly, principal_of

from . import selectors, services
from .access import WorkspaceRole
from .roles import Role, Scope


class StrictCharField(serializers.CharField):
    """A CharField that refuses numbers and booleans, and drops control characters."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        data = "".join(ch for ch in data if unicodedata.category(ch) != "Cc")
        return super().to_internal_value(data)


class RoleField(serializers.ChoiceField):
    def __init__(self, **kwargs):
        super().__init__(choices=[r.label for r in Role], **kwargs)

    def to_internal_value(self, data):
        return Role.parse(super().to_internal_value(data))


class MethodAccessView(APIView):
    """An APIView whose permissions are declared per HTTP method."""

    access: dict[str, tuple] = {}

    def get_permissions(self):
        return [permission() for permission in self.access.get(self.request.method, (IsAuthenticated,))]


def _workspace_out(workspace) -> dict:
    return {"id": workspace.id, "name": workspace.name, "user_id": workspace.owner_id, "created_at": workspace.created_at}


def _member_out(membership) -> dict:
    user = membership.user
    return {"userId": user.id, "email": user.email, "name": user.name, "role": membership.role}


def _key_out(key) -> dict:
    return {
        "id": key.id,
        "name": key.name,
        "scopes": key.scopes,
        "prefix": key.prefix,
        "created_by": key.created_by_id,
        "created_at": key.created_at,
        "last_used_at": key.last_used_at,
    }


class WorkspaceListApi(MethodAccessView):
    access = {
        "GET": (IsAuthenticated, RequireScope(Scope.WORKSPACES_READ)),
        "POST": (SessionOnly,),
    }

    class InputSerializer(serializers.Serializer):
        name = StrictCharField(max_length=100)

    def get(self, request):
        return Response(selectors.workspace_list(principal=principal_of(request)))

    def post(self, request):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        workspace = services.workspace_create(owner=request.user, name=data.validated_data["name"])
        return Response(_workspace_out(workspace), status=status.HTTP_201_CREATED)


class WorkspaceDetailApi(MethodAccessView):
    access = {
        "GET": (WorkspaceRole(Role.VIEWER, key_scope=Scope.WORKSPACES_READ),),
        "DELETE": (WorkspaceRole(Role.OWNER, session_only=True),),
    }

    def get(self, request, workspace_id):
        access = request.workspace_access
        return Response(selectors.workspace_summary(workspace=access.workspace, role=access.role))

    def delete(self, request, workspace_id):
        services.workspace_delete(workspace=request.workspace_access.workspace)
        return Response({"success": True})


class MemberListApi(MethodAccessView):
    access = {
        "GET": (WorkspaceRole(Role.VIEWER, key_scope=Scope.WORKSPACES_READ),),
        "POST": (WorkspaceRole(Role.ADMIN, session_only=True),),
    }

    class InputSerializer(serializers.Serializer):
        email = StrictCharField(max_length=255)
        role = RoleField()

    def get(self, request, workspace_id):
        members = selectors.membership_list(workspace=request.workspace_access.workspace)
        return Response([_member_out(m) for m in members])

    def post(self, request, workspace_id):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        membership = services.membership_add(
            workspace=request.workspace_access.workspace,
            acting_role=request.workspace_access.role,
            email=data.validated_data["email"],
            role=data.validated_data["role"],
        )
        return Response(_member_out(membership), status=status.HTTP_201_CREATED)


class MemberDetailApi(MethodAccessView):
    access = {
        "PATCH": (WorkspaceRole(Role.ADMIN, session_only=True),),
        # Any member may leave; removing someone else needs admin (checked by the service).
        "DELETE": (WorkspaceRole(Role.VIEWER, session_only=True),),
    }

    class InputSerializer(serializers.Serializer):
        role = RoleField()

    def patch(self, request, workspace_id, user_id):
        access = request.workspace_access
        membership = selectors.membership_get(workspace=access.workspace, user_id=user_id)
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        membership = services.membership_update(
            membership=membership, acting_role=access.role, role=data.validated_data["role"]
        )
        return Response(_member_out(membership))

    def delete(self, request, workspace_id, user_id):
        access = request.workspace_access
        membership = selectors.membership_get(workspace=access.workspace, user_id=user_id)
        services.membership_remove(membership=membership, acting_user=request.user, acting_role=access.role)
        return Response({"success": True})


class ApiKeyListApi(MethodAccessView):
    access = {
        "GET": (WorkspaceRole(Role.ADMIN, session_only=True),),
        "POST": (WorkspaceRole(Role.ADMIN, session_only=True),),
    }

    class InputSerializer(serializers.Serializer):
        name = StrictCharField(max_length=100)
        scopes = serializers.ListField(child=StrictCharField(), allow_empty=False, max_length=len(Scope.ALL) * 2)

    def get(self, request, workspace_id):
        return Response([_key_out(k) for k in selectors.api_key_list(workspace=request.workspace_access.workspace)])

    def post(self, request, workspace_id):
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        key, raw = services.api_key_create(
            workspace=request.workspace_access.workspace,
            created_by=request.user,
            name=data.validated_data["name"],
            scopes=data.validated_data["scopes"],
        )
        return Response({**_key_out(key), "key": raw}, status=status.HTTP_201_CREATED)


class ApiKeyDetailApi(MethodAccessView):
    access = {"DELETE": (WorkspaceRole(Role.ADMIN, session_only=True),)}

    def delete(self, request, workspace_id, key_id):
        key = selectors.api_key_get(workspace=request.workspace_access.workspace, key_id=key_id)
        services.api_key_revoke(api_key=key)
        return Response({"success": True})
