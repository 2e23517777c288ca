"""Workspace, member and API-key routes. Who may call what is in docs/api.md (Workspaces).

Each view declares its access per method (fleet.api.views.ApiView); `WorkspaceRole` resolves
the workspace and the caller's role once and leaves it on `request.workspace_access`.
"""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import BasePermission
from rest_framework.response import Response

from fleet.api.fields import StrictCharField
from fleet.api.permissions import IsAuthenticated, RequireScope, SessionOnly, principal_of
from fleet.api.serializers import SuccessOut
from fleet.api.throttling import throttle
from fleet.api.views import ApiView

from . import selectors, services
from .access import WorkspaceRole
from .roles import Role, Scope
from .serializers import (
    ApiKeyCreatedOut,
    ApiKeyInput,
    ApiKeyOut,
    InvitationOut,
    MemberOut,
    RoleField,
    WorkspaceListItemOut,
    WorkspaceOut,
)


class WorkspaceListApi(ApiView):
    request_examples = {
        "POST": {
            "A new workspace": {"name": "Support"},
        },
    }
    access = {
        "GET": (IsAuthenticated, RequireScope(Scope.WORKSPACES_READ)),
        "POST": (SessionOnly,),
    }

    class InputSerializer(serializers.Serializer):
        name = StrictCharField(max_length=100)

    @extend_schema(responses=WorkspaceListItemOut(many=True))
    def get(self, request):
        """The caller's workspaces."""
        rows = selectors.workspace_list(principal=self.principal)
        return Response(WorkspaceListItemOut(rows, many=True).data)

    @extend_schema(request=InputSerializer, responses={201: WorkspaceOut})
    def post(self, request):
        """Create a workspace (the caller becomes its owner)."""
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
        """One workspace."""
        access = request.workspace_access
        row = selectors.workspace_summary(workspace=access.workspace, role=access.role)
        return Response(WorkspaceListItemOut(row).data)

    @extend_schema(responses={200: SuccessOut})
    def delete(self, request, workspace_id):
        """Delete a workspace (owner only; its agents stay with their owners)."""
        services.workspace_delete(workspace=request.workspace_access.workspace)
        return Response(SuccessOut({"success": True}).data)


class MemberListApi(ApiView):
    request_examples = {
        "POST": {
            "Add an editor": {"email": "grace@example.com", "role": "editor"},
        },
    }
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
        """The workspace's members and their roles."""
        members = selectors.membership_list(workspace=request.workspace_access.workspace)
        return Response(MemberOut(members, many=True).data)

    @extend_schema(
        request=InputSerializer, responses={202: InvitationOut},
        description="Invites the address: the invitee joins by accepting (POST /invitations/:id/accept). The "
                    "answer is the same whether the address has an account (no oracle of registered emails).",
    )
    def post(self, request, workspace_id):
        """Invite a member by email with a role (they join by accepting)."""
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        # Invitations go to any address: bound how fast anyone sends them.
        throttle("member_add_user", self.principal.user.pk, settings.MEMBER_ADD_RATE_PER_USER)
        throttle("member_add_workspace", request.workspace_access.workspace.pk, settings.MEMBER_ADD_RATE_PER_WORKSPACE)
        invitation = services.invitation_create(
            workspace=request.workspace_access.workspace,
            invited_by=self.principal.user,
            acting_role=request.workspace_access.role,
            email=data.validated_data["email"],
            role=data.validated_data["role"],
        )
        return Response(InvitationOut(invitation).data, status=status.HTTP_202_ACCEPTED)


class MemberDetailApi(ApiView):
    request_examples = {
        "PATCH": {
            "Make an admin": {"role": "admin"},
        },
    }
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
        """Change a member's role."""
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
        """Remove a member."""
        access = request.workspace_access
        membership = selectors.membership_get(workspace=access.workspace, user_id=user_id)
        services.membership_remove(membership=membership, acting_user=self.principal.user, acting_role=access.role)
        return Response(SuccessOut({"success": True}).data)


class WorkspaceInvitationListApi(ApiView):
    access = {"GET": (WorkspaceRole(Role.ADMIN, session_only=True),)}

    @extend_schema(summary="The workspace's pending invitations", responses=InvitationOut(many=True))
    def get(self, request, workspace_id):
        invitations = selectors.invitation_list(workspace=request.workspace_access.workspace)
        return Response(InvitationOut(invitations, many=True).data)


class WorkspaceInvitationDetailApi(ApiView):
    access = {"DELETE": (WorkspaceRole(Role.ADMIN, session_only=True),)}

    @extend_schema(summary="Withdraw an invitation", responses={200: SuccessOut})
    def delete(self, request, workspace_id, invitation_id):
        access = request.workspace_access
        invitation = selectors.invitation_get(workspace=access.workspace, invitation_id=invitation_id)
        services.invitation_revoke(invitation=invitation, acting_role=access.role)
        return Response(SuccessOut({"success": True}).data)


class InvitationAddressee(BasePermission):
    """The URL's invitation is addressed to the signed-in user's email: it is left on
    `request.invitation`; anyone else gets 404, as if it did not exist (every method, HEAD and
    OPTIONS included). Runs after SessionOnly."""

    def has_permission(self, request, view):
        request.invitation = selectors.invitation_for_get(user=principal_of(request).user,
                                                          invitation_id=view.kwargs["invitation_id"])
        return True


class MyInvitationListApi(ApiView):
    access = {"GET": (SessionOnly,)}

    @extend_schema(summary="Invitations addressed to the signed-in user's email", responses=InvitationOut(many=True))
    def get(self, request):
        return Response(InvitationOut(selectors.invitations_for(user=self.principal.user), many=True).data)


class MyInvitationDetailApi(ApiView):
    access = {"DELETE": (SessionOnly, InvitationAddressee)}

    @extend_schema(summary="Decline an invitation", responses={200: SuccessOut})
    def delete(self, request, invitation_id):
        services.invitation_decline(invitation=request.invitation)
        return Response(SuccessOut({"success": True}).data)


class MyInvitationAcceptApi(ApiView):
    documented_errors = (409,)
    access = {"POST": (SessionOnly, InvitationAddressee)}

    @extend_schema(summary="Accept an invitation: join the workspace with its role", request=None,
                   responses=WorkspaceListItemOut)
    def post(self, request, invitation_id):
        membership = services.invitation_accept(invitation=request.invitation, user=self.principal.user)
        row = selectors.workspace_summary(workspace=membership.workspace, role=membership.rank)
        return Response(WorkspaceListItemOut(row).data)


class ApiKeyListApi(ApiView):
    request_examples = {
        "POST": {
            "A key for CI deploys": {"name": "ci-deployer", "scopes": ["agents:read", "agents:write"]},
        },
    }
    access = {
        "GET": (WorkspaceRole(Role.ADMIN, session_only=True),),
        "POST": (WorkspaceRole(Role.ADMIN, session_only=True),),
    }

    @extend_schema(responses=ApiKeyOut(many=True))
    def get(self, request, workspace_id):
        """The workspace's API keys (never the key itself)."""
        keys = selectors.api_key_list(workspace=request.workspace_access.workspace)
        return Response(ApiKeyOut(keys, many=True).data)

    @extend_schema(request=ApiKeyInput, responses={201: ApiKeyCreatedOut})
    def post(self, request, workspace_id):
        """Create a workspace API key (the key is shown this once)."""
        data = ApiKeyInput(data=request.data)
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
        """Revoke a workspace API key."""
        key = selectors.api_key_get(workspace=request.workspace_access.workspace, key_id=key_id)
        services.api_key_revoke(api_key=key)
        return Response(SuccessOut({"success": True}).data)
