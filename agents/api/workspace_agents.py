"""The agents of a workspace: list, assign, candidates, unassign."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from fleet.api.fields import RawStringField
from fleet.api.serializers import SuccessOut
from fleet.api.views import ApiView
from workspaces.access import WorkspaceRole
from workspaces.roles import Role, Scope

from ..selectors import workspace_agent_candidates, workspace_agent_list
from ..services.assignment import workspace_agent_assign, workspace_agent_unassign
from ..targets.access import hidden_deploy_targets
from .serializers import AssignmentOut, CandidateOut, WorkspaceAgentOut


class WorkspaceAgentListApi(ApiView):
    request_examples = {
        "POST": {
            "Share an agent": {"agentId": "<agent id>", "role": "support"},
        },
    }
    access = {
        "GET": (WorkspaceRole(Role.VIEWER, key_scope=Scope.AGENTS_READ),),
        "POST": (WorkspaceRole(Role.EDITOR, key_scope=Scope.AGENTS_WRITE),),
    }

    class InputSerializer(serializers.Serializer):
        agentId = serializers.UUIDField()  # noqa: N815 - the spec's name
        role = RawStringField(required=False, allow_null=True)

        def validate_role(self, value):
            if value is not None and not 1 <= len(value.strip()) <= 50:
                raise serializers.ValidationError("A role label has 1 to 50 characters.")
            return value.strip() if value is not None else None

    @extend_schema(responses=WorkspaceAgentOut(many=True))
    def get(self, request, workspace_id):
        """The workspace's agents."""
        workspace = request.workspace_access.workspace
        assignments = workspace_agent_list(workspace=workspace, user=self.principal.user).exclude(
            agent__deploy_target__in=hidden_deploy_targets(self.principal))
        return Response(WorkspaceAgentOut(assignments, many=True).data)

    @extend_schema(request=InputSerializer, responses={201: AssignmentOut, 200: AssignmentOut})
    def post(self, request, workspace_id):
        """Add one of the caller's agents to the workspace."""
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        assignment, created = workspace_agent_assign(
            workspace=request.workspace_access.workspace,
            principal=self.principal,
            agent_id=body.validated_data["agentId"],
            role=body.validated_data.get("role"),
        )
        code = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(AssignmentOut(assignment).data, status=code)


class WorkspaceAgentCandidatesApi(ApiView):
    access = {"GET": (WorkspaceRole(Role.EDITOR, key_scope=Scope.AGENTS_WRITE),)}

    @extend_schema(responses=CandidateOut(many=True))
    def get(self, request, workspace_id):
        """The caller's agents that could join the workspace."""
        workspace = request.workspace_access.workspace
        agents = workspace_agent_candidates(workspace=workspace, principal=self.principal)
        return Response(CandidateOut(agents, many=True).data)


class WorkspaceAgentDetailApi(ApiView):
    access = {"DELETE": (WorkspaceRole(Role.ADMIN),)}

    @extend_schema(responses={200: SuccessOut})
    def delete(self, request, workspace_id, agent_id):
        """Take an agent out of the workspace (the agent stays)."""
        workspace_agent_unassign(workspace=request.workspace_access.workspace, agent_id=agent_id)
        return Response(SuccessOut({"success": True}).data)
