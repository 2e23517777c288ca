"""Output shapes of the agent routes (field names exactly as the spec writes them).

Each is written by its view (`AgentOut(agent).data`) and documents it. One exception, on
purpose: GET /agents is built from tuples in agents.selectors (a serializer per row costs
about 30 ms for 1,000 agents), so AgentListItemOut is derived from the builder's own field
table, LIST_KEYS, with each field typed as in the bodies below (tests/agents/test_list_shape.py).
"""

from __future__ import annotations

import copy

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from fleet.api.serializers import FlatOutput, IntegerField, NumberField, TimestampField

from ..models import DeployTarget, PausedReason, RuntimeFamily, SandboxProfile, Status
from ..selectors import LIST_KEYS


class WorkspaceRefOut(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    role = serializers.CharField(allow_null=True, help_text="the assignment label, `member` by default")


class _AgentCore(serializers.Serializer):
    """The fields every agent body starts with, in this order."""

    id = serializers.UUIDField()
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=Status.choices, help_text="see the contract's States and transitions")
    runtime_family = serializers.ChoiceField(choices=RuntimeFamily.choices)
    deploy_target = serializers.ChoiceField(choices=DeployTarget.choices, help_text="`external` for an adopted agent")
    execution_target_id = serializers.CharField(help_text="`docker`, `k8s:<cluster-id>`, `remote:<host-id>`, `proxmox`")
    sandbox_profile = serializers.ChoiceField(choices=SandboxProfile.choices)
    vcpu = NumberField()
    ram_mb = IntegerField()
    disk_gb = IntegerField()
    node = serializers.CharField()
    container_name = serializers.CharField()
    created_at = TimestampField()


# sandbox_type comes last in each body (it mirrors sandbox_profile), so each class declares it.
class ResourceAdjustmentOut(serializers.Serializer):
    requested = NumberField()
    applied = NumberField()
    why = serializers.CharField()


class AgentDeployOut(_AgentCore):
    """The agent just deployed (queued), with the requested resources the deploy changed."""

    sandbox_type = serializers.ChoiceField(choices=SandboxProfile.choices)
    adjusted = serializers.SerializerMethodField(help_text="vcpu, ram_mb or disk_gb as asked for and as "
                                                 "applied, with why (a minimum, a server limit, rounding, paas)")

    @extend_schema_field(serializers.DictField(child=ResourceAdjustmentOut()))
    def get_adjusted(self, agent) -> dict:
        return self.context.get("adjusted", {})


class AgentOut(_AgentCore):
    """An agent (adopt, start and stop answer it)."""

    container_id = serializers.CharField()
    gateway_host_port = IntegerField(allow_null=True)
    paused_reason = serializers.ChoiceField(choices=PausedReason.choices, allow_null=True)
    last_error = serializers.CharField(allow_blank=True, help_text="the current reason of a warning, error or "
                                       "stop (or of a deploy waiting to retry), empty when there is none")
    updated_at = TimestampField()
    sandbox_type = serializers.ChoiceField(choices=SandboxProfile.choices)


class AgentDetailOut(FlatOutput, AgentOut):
    """An agent with the caller's role on it and whether the caller owns it directly."""

    # The caller's standing comes from the view's agents.selectors.AgentAccess, context["access"].

    effectiveRole = serializers.SerializerMethodField()  # noqa: N815 - the spec's names
    isDirectOwner = serializers.SerializerMethodField()  # noqa: N815
    restartCount = IntegerField(source="restart_count", help_text="restarts the engine made by itself "  # noqa: N815
                                "(restart policy, a pod's container), as the last monitoring sweep saw")
    oomKilled = serializers.BooleanField(source="oom_killed", help_text="whether the engine says "  # noqa: N815
                                         "the workload last ended killed for lack of memory")

    def get_effectiveRole(self, agent) -> str:  # noqa: N802
        return self.context["access"].role.label

    def get_isDirectOwner(self, agent) -> bool:  # noqa: N802
        return self.context["access"].is_direct_owner


_LIST_ONLY_FIELDS = {
    "isDirectOwner": serializers.BooleanField(),
    "effectiveRole": serializers.CharField(help_text="the caller's role on the agent, e.g. `owner`"),
    "workspaces": WorkspaceRefOut(many=True, help_text="the workspaces the caller may see, by name"),
}


def _list_item_fields() -> dict:
    """One field per key the GET /agents builder writes, in its order (copies are numbered in
    creation order, which is the order a serializer lists its fields in)."""
    known = {**AgentOut._declared_fields, **_LIST_ONLY_FIELDS}
    return {name: copy.deepcopy(known[name]) for name in LIST_KEYS}


AgentListItemOut = type(
    "AgentListItemOut",
    (serializers.Serializer,),
    {"__module__": __name__, "__doc__": "An agent the caller may see, with its role and workspaces.",
     **_list_item_fields()},
)


class AgentRedeployOut(serializers.Serializer):
    success = serializers.BooleanField()
    status = serializers.CharField()


class GatewayUrlOut(serializers.Serializer):
    """Where the agent's gateway UI answers, and its host port."""

    url = serializers.CharField()
    port = IntegerField()


class WorkspaceAgentOut(serializers.Serializer):
    """An agent assigned to the workspace."""

    # Reads the annotated WorkspaceAgent rows of agents.selectors.workspace_agent_list.

    agentId = serializers.UUIDField(source="agent_id")  # noqa: N815
    agentName = serializers.CharField(source="agent_name")  # noqa: N815
    agentStatus = serializers.CharField(source="agent_status")  # noqa: N815
    role = serializers.CharField(allow_null=True)
    isDirectOwner = serializers.BooleanField(source="is_direct_owner")  # noqa: N815


class AssignmentOut(serializers.Serializer):
    workspace_id = serializers.UUIDField()
    agent_id = serializers.UUIDField()
    role = serializers.CharField(allow_null=True)


class CandidateOut(serializers.Serializer):
    """One of the caller's own agents, and whether it is assigned to this workspace."""

    agentId = serializers.UUIDField(source="id")  # noqa: N815
    name = serializers.CharField()
    status = serializers.CharField()
    assigned = serializers.BooleanField()
