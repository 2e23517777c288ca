"""Response bodies of agents, with the field names the spec writes."""

from __future__ import annotations

from ..models import Agent

DEPLOY_FIELDS = (
    "id", "name", "status", "runtime_family", "deploy_target", "execution_target_id", "sandbox_profile",
    "vcpu", "ram_mb", "disk_gb", "node", "container_name", "created_at",
)
DETAIL_FIELDS = DEPLOY_FIELDS + (
    "container_id", "gateway_host_port", "paused_reason", "last_error", "updated_at",
)


def agent_body(agent: Agent, fields=DETAIL_FIELDS) -> dict:
    body = {name: getattr(agent, name) for name in fields}
    body["sandbox_type"] = agent.sandbox_type
    return body


def agent_detail_body(agent: Agent, *, role=None, is_direct_owner: bool | None = None) -> dict:
    body = agent_body(agent)
    if role is not None:
        body["effectiveRole"] = role.label
    if is_direct_owner is not None:
        body["isDirectOwner"] = is_direct_owner
    return body
