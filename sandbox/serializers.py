"""Response (and documented request) shapes of the nemoclaw routes."""

from __future__ import annotations

from rest_framework import serializers

from fleet.api.serializers import IntegerField, TimestampField

from .policy import EXEC_MODES, MODELS, TOOL_PROFILES


class ExecRuleIO(serializers.Serializer):
    pattern = serializers.CharField()
    argPattern = serializers.CharField(required=False)  # noqa: N815


class ExecPolicyIO(serializers.Serializer):
    mode = serializers.ChoiceField(choices=EXEC_MODES)
    allow = ExecRuleIO(many=True)


class ToolsPolicyIO(serializers.Serializer):
    profile = serializers.ChoiceField(choices=TOOL_PROFILES)
    allow = serializers.ListField(child=serializers.CharField())
    deny = serializers.ListField(child=serializers.CharField())


class NetworkPolicyIO(serializers.Serializer):
    allow = serializers.ListField(child=serializers.CharField())
    deny = serializers.ListField(child=serializers.CharField())


class PolicyDocumentIO(serializers.Serializer):
    """The policy document (POST takes it as the body; sections left out keep their values)."""

    exec = ExecPolicyIO()
    tools = ToolsPolicyIO()
    network = NetworkPolicyIO()
    model = serializers.ChoiceField(choices=MODELS)


class PolicyOut(serializers.Serializer):
    version = IntegerField()
    policy = PolicyDocumentIO()
    appliedAt = TimestampField(source="applied_at", allow_null=True)  # noqa: N815
    applied = serializers.BooleanField()
    networkEnforced = serializers.BooleanField(source="network_enforced")  # noqa: N815


class ApprovalOut(serializers.Serializer):
    id = serializers.CharField(source="request_id")
    kind = serializers.CharField()
    command = serializers.CharField()
    cwd = serializers.CharField()
    allowedDecisions = serializers.ListField(child=serializers.CharField(), source="allowed_decisions")  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815
    expiresAt = TimestampField(source="expires_at", allow_null=True)  # noqa: N815
    status = serializers.CharField()
    decidedBy = serializers.UUIDField(source="decided_by_id", allow_null=True)  # noqa: N815
    decidedAt = TimestampField(source="decided_at", allow_null=True)  # noqa: N815


class DecisionIn(serializers.Serializer):
    decision = serializers.ChoiceField(choices=("approve", "deny"))


class RuntimeExecOut(serializers.Serializer):
    security = serializers.CharField(allow_null=True)
    ask = serializers.CharField(allow_null=True)
    askFallback = serializers.CharField(allow_null=True)  # noqa: N815


class RuntimeOut(serializers.Serializer):
    version = serializers.CharField()
    exec = RuntimeExecOut()


class StatusOut(serializers.Serializer):
    sandbox = serializers.CharField()
    agentStatus = serializers.CharField(source="agent_status")  # noqa: N815
    model = serializers.CharField()
    inferenceConfigured = serializers.BooleanField(source="inference_configured")  # noqa: N815
    policyVersion = IntegerField(source="policy_version")  # noqa: N815
    policyApplied = serializers.BooleanField(source="policy_applied")  # noqa: N815
    pendingApprovals = IntegerField(source="pending_approvals")  # noqa: N815
    runtime = RuntimeOut(allow_null=True)
