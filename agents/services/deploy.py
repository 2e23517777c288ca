"""Deploy: store the agent `queued` and publish its provisioning job after commit."""

from __future__ import annotations

import functools
import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from fleet.api.principal import Principal
from fleet.errors import BrokerUnavailable, FieldErrors
from fleet.task_queue import task_named
from workspaces.roles import Role

from ..events import agent_event
from ..files.drafts import migration_draft_consume, migration_draft_get
from ..gateway.tokens import gateway_token_generate
from ..llm_model.choice import default_routing, routing_parse
from ..llm_model.services import agent_model_store, deploy_model_check
from ..models import Agent, Status, WorkspaceAgent
from ..selectors import require_agent_scope
from .assignment import workspace_agent_assign
from .billing import agent_quota_check
from .idempotency import DeployKey, deploy_key_record
from .migrated import migrated_settings_apply, request_from_manifest
from .provisioning import PROVISION_TASK
from .selection import DeployRequest, check_migration_draft_id, deploy_plan_resolve, refuse_session_only_for_keys

logger = logging.getLogger(__name__)


def provisioning_enqueue(agent: Agent) -> None:
    """Publish the provisioning job once the current transaction commits (never a rolled-back row).

    The row is the record of the pending work: it carries the deadline after which the
    reconciler (services.reconcile) publishes the job again, should this one never arrive."""
    deadline = timezone.now() + timedelta(seconds=settings.AGENT_QUEUED_DEADLINE_SECONDS)
    Agent.objects.filter(pk=agent.pk).update(provision_deadline_at=deadline, provision_job_id="", provision_takeovers=0)

    def publish():
        try:
            task_named(PROVISION_TASK).delay(str(agent.pk))
        except BrokerError:
            # Known lost now: due at the reconciler's next sweep (once the broker is back),
            # not AGENT_QUEUED_DEADLINE_SECONDS later.
            Agent.objects.filter(pk=agent.pk, status=Status.QUEUED).update(provision_deadline_at=timezone.now())
            raise

    transaction.on_commit(publish)


def publishes_after_commit(service):
    """For a service that stores work and publishes its job after commit: a broker that refuses
    the job is a 503 broker_unavailable, never a 500. What was stored stays: the reconciler
    publishes the job again once the deadline passes."""

    @functools.wraps(service)
    def guarded(*args, **kwargs):
        try:
            return service(*args, **kwargs)
        except BrokerError as exc:
            logger.warning("The provisioning job could not be published (the reconciler will retry): %s", exc)
            raise BrokerUnavailable(
                "The task broker could not be reached: the agent is stored as queued and will be deployed "
                "once it is back."
            ) from exc

    return guarded


def key_workspace_assign(*, principal: Principal, agent: Agent) -> None:
    """An agent deployed or adopted with a workspace API key joins the key's workspace."""
    if principal.is_api_key:
        WorkspaceAgent.objects.create(workspace_id=principal.workspace_id, agent=agent)


@publishes_after_commit
@transaction.atomic
def agent_deploy(*, principal: Principal, request: DeployRequest, deploy_key: DeployKey | None = None) -> Agent:
    """POST /agents/deploy: the row now (`queued`), the workload later (agents.tasks). With an
    Idempotency-Key (services.idempotency), the key names the agent in the same transaction."""
    refuse_session_only_for_keys(principal, request)  # before the scope: docs/api.md's order
    require_agent_scope(principal, Role.EDITOR)
    draft = None
    if request.migration_draft_id is not None:
        check_migration_draft_id(request.migration_draft_id)
        draft = migration_draft_get(user=principal.user, draft_id=request.migration_draft_id)
        request = request_from_manifest(request, draft.manifest)
    errors = FieldErrors()  # the placement's and the model's bad fields, answered together
    plan = errors.check(lambda: deploy_plan_resolve(principal=principal, request=request))
    model = errors.check(lambda: deploy_model_check(request.model, principal=principal)) \
        if request.model is not None else None
    routing = errors.check(lambda: routing_parse(request.model_routing)) \
        if request.model_routing is not None else default_routing()
    errors.raise_any()
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
        model_routing=routing,
    )
    if deploy_key is not None:
        deploy_key_record(deploy_key=deploy_key, agent=agent)
    key_workspace_assign(principal=principal, agent=agent)
    if model is not None:
        agent_model_store(agent=agent, choice=model)
    if draft is not None:
        migrated_settings_apply(agent=agent, manifest=draft.manifest)
        migration_draft_consume(draft=draft, agent_id=agent.pk)  # last: nothing after it can fail
    agent_event(agent, "agent.queued", f"Agent {agent.name} was queued for deployment.")
    provisioning_enqueue(agent)
    return agent


@transaction.atomic
def agent_deploy_shared(*, principal: Principal, request: DeployRequest, workspace) -> Agent:
    """Deploy, and share the new agent into `workspace` at once (the console's deploy; through the
    API these are two calls: POST /agents/deploy, then POST /workspaces/:id/agents). A refused
    share undoes the deploy: no agent is queued."""
    agent = agent_deploy(principal=principal, request=request)
    workspace_agent_assign(workspace=workspace, principal=principal, agent_id=agent.pk)
    return agent
