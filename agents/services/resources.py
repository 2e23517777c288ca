"""Changing a deployed agent's resources (vCPU, RAM, disk, sandbox profile): the only way is a
new workload, so the change is validated with the deploy's own rules (limits, profiles the
family and target allow), stored, and applied by a redeploy (state kept). A running agent is
stopped first; one still deploying is refused (its job would race the change)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from fleet.api.principal import Principal
from fleet.errors import InvalidState, ValidationFailed

from ..backends import registry
from ..events import agent_event
from ..models import IN_FLIGHT, Agent, Status
from .lifecycle import agent_lock, agent_redeploy, agent_stop
from .selection import DeployRequest, deploy_plan_resolve

RESOURCE_FIELDS = ("vcpu", "ram_mb", "disk_gb", "sandbox_profile")


@dataclass(frozen=True)
class ResourceChange:
    vcpu: float | None = None
    ram_mb: float | None = None
    disk_gb: float | None = None
    sandbox_profile: str | None = None


def _refuse_shrinking_disk(agent: Agent, disk_gb: int) -> None:
    """Where disk_gb is real storage that only grows (the registry row says why), a smaller
    value is refused before anything changes: the backend could not give the agent less."""
    refusal = registry.disk_shrink_refusal_of(agent.deploy_target)
    if refusal and disk_gb < agent.disk_gb:
        raise ValidationFailed({"disk_gb": f"The disk cannot shrink from {agent.disk_gb} GB to {disk_gb} GB: "
                                           f"{refusal}. Keep {agent.disk_gb} GB or more."})


@transaction.atomic
def agent_resources_change(*, principal: Principal, agent: Agent, change: ResourceChange) -> Agent:
    """Validate, store and redeploy. 400 validation_error as POST /agents/deploy would answer
    for the same values, and on disk_gb for a smaller disk where the target's storage only grows
    (k8s, proxmox); 409 invalid_state while a deploy is in flight or for an adopted agent."""
    agent = agent_lock(agent.pk)
    if agent.is_external:
        raise InvalidState("An adopted agent's resources are its host's to change.")
    if agent.status in IN_FLIGHT:
        raise InvalidState(f"The agent is {agent.status}; change its resources once the deploy ends.")
    plan = deploy_plan_resolve(principal=principal, request=DeployRequest(
        name=agent.name, runtime_family=agent.runtime_family, deploy_target=agent.deploy_target,
        execution_target_id=agent.execution_target_id,
        sandbox_profile=change.sandbox_profile or agent.sandbox_profile,
        vcpu=agent.vcpu if change.vcpu is None else change.vcpu,
        ram_mb=agent.ram_mb if change.ram_mb is None else change.ram_mb,
        disk_gb=agent.disk_gb if change.disk_gb is None else change.disk_gb,
    ))
    _refuse_shrinking_disk(agent, plan.disk_gb)
    before = {field: getattr(agent, field) for field in RESOURCE_FIELDS}
    if agent.status == Status.RUNNING:
        agent = agent_stop(agent=agent)
    for field in RESOURCE_FIELDS:
        setattr(agent, field, getattr(plan, field))
    agent.save(update_fields=[*RESOURCE_FIELDS, "updated_at"])
    after = {field: getattr(agent, field) for field in RESOURCE_FIELDS}
    agent_event(agent, "agent.resources_changed", f"Agent {agent.name}'s resources were changed; it is redeploying.",
                before=before, after=after)
    return agent_redeploy(agent=agent)
