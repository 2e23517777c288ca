"""Response shapes for the OpenAPI document (/api/schema/). The views build their bodies
directly (agents.api.bodies, agents.selectors); these serializers only describe them."""

from __future__ import annotations

from rest_framework import serializers


class WorkspaceRefOut(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    role = serializers.CharField(allow_null=True, help_text="the assignment label, `member` by default")


class _AgentCore(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    status = serializers.CharField(help_text="queued, deploying, running, warning, error or stopped")
    runtime_family = serializers.CharField()
    deploy_target = serializers.CharField()
    sandbox_profile = serializers.CharField()
    sandbox_type = serializers.CharField()
    vcpu = serializers.FloatField()
    ram_mb = serializers.IntegerField()
    disk_gb = serializers.IntegerField()
    node = serializers.CharField()
    created_at = serializers.DateTimeField()


class AgentListItemOut(_AgentCore):
    container_id = serializers.CharField()
    paused_reason = serializers.CharField(allow_null=True)
    isDirectOwner = serializers.BooleanField()  # noqa: N815 - the spec's name
    effectiveRole = serializers.CharField()  # noqa: N815
    workspaces = WorkspaceRefOut(many=True)


class AgentDeployOut(_AgentCore):
    execution_target_id = serializers.CharField()
    container_name = serializers.CharField()


class AgentOut(AgentDeployOut):
    container_id = serializers.CharField()
    gateway_host_port = serializers.IntegerField(allow_null=True)
    paused_reason = serializers.CharField(allow_null=True)
    last_error = serializers.CharField()
    updated_at = serializers.DateTimeField()


class AgentDetailOut(AgentOut):
    isDirectOwner = serializers.BooleanField()  # noqa: N815
    effectiveRole = serializers.CharField()  # noqa: N815


class AgentSuccessOut(serializers.Serializer):
    success = serializers.BooleanField()


class AgentRedeployOut(AgentSuccessOut):
    status = serializers.CharField()


class GatewayUrlOut(serializers.Serializer):
    url = serializers.CharField()
    port = serializers.IntegerField()


class WorkspaceAgentOut(serializers.Serializer):
    agentId = serializers.UUIDField()  # noqa: N815
    agentName = serializers.CharField()  # noqa: N815
    agentStatus = serializers.CharField()  # noqa: N815
    role = serializers.CharField(allow_null=True)
    isDirectOwner = serializers.BooleanField()  # noqa: N815


class AssignmentOut(serializers.Serializer):
    workspace_id = serializers.UUIDField()
    agent_id = serializers.UUIDField()
    role = serializers.CharField(allow_null=True)


class CandidateOut(serializers.Serializer):
    agentId = serializers.UUIDField()  # noqa: N815
    name = serializers.CharField()
    status = serializers.CharField()
    assigned = serializers.BooleanField()
