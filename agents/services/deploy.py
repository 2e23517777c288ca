"""Deploy: store the agent `queued` and publish its provisioning job after commit."""

from __future__ import annotations

from django.db import transaction

from fleet.api.principal import Principal
from workspaces.roles import Role

from ..events import agent_event
from ..files.drafts import migration_draft_consume, migration_draft_get
from ..files.migrate import migrated_settings_apply, request_from_manifest
from ..models import Agent, Status, WorkspaceAgent
from ..selectors import require_agent_scope
from ..tasks import provision_agent
from ..tokens import gateway_token_generate
from .billing import agent_quota_check
from .selection import DeployRequest, check_migration_draft_id, deploy_plan_resolve, refuse_session_only_for_keys


def provisioning_enqueue(agent: Agent) -> None:
    """Publish the provisioning job once the current transaction commits (never a rolled-back row)."""
    provision_agent.delay_on_commit(str(agent.pk))


def key_workspace_assign(*, principal: Principal, agent: Agent) -> None:
    """An agent deployed or adopted with a workspace API key joins the key's workspace."""
    if principal.is_api_key:
        WorkspaceAgent.objects.create(workspace_id=principal.workspace_id, agent=agent)


@transaction.atomic
def agent_deploy(*, principal: Principal, request: DeployRequest) -> Agent:
    """POST /agents/deploy: the row now (`queued`), the workload later (agents.tasks)."""
    refuse_session_only_for_keys(principal, request)  # before the scope: docs/api.md's order
    require_agent_scope(principal, Role.EDITOR)
    draft = None
    if request.migration_draft_id is not None:
        check_migration_draft_id(request.migration_draft_id)
        draft = migration_draft_get(user=principal.user, draft_id=request.migration_draft_id)
        request = request_from_manifest(request, draft.manifest)
    plan = deploy_plan_resolve(principal=principal, request=request)
    agent_quota_check(user=principal.user)
    agent = Agent.objects.create(
        name=plan.name,
        owner=principal.user,
        status=Status.QUEUED,
        runtime_family=plan.runtime_family,
        deploy_target=plan.deploy_target,
        execution_target_id=plan.execution_target_id,
        sandbox_profile=plan.sandbox_profile,
        vcpu=plan.vcpu,
        ram_mb=plan.ram_mb,
        disk_gb=plan.disk_gb,
        gateway_token=gateway_token_generate(),
    )
    key_workspace_assign(principal=principal, agent=agent)
    if draft is not None:
        migrated_settings_apply(agent=agent, manifest=draft.manifest)
        migration_draft_consume(draft=draft, agent_id=agent.pk)  # last: nothing after it can fail
    agent_event(agent, "agent.queued", f"Agent {agent.name} was queued for deployment.")
    provisioning_enqueue(agent)
    return agent
