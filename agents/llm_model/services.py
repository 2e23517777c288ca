"""Choosing an agent's model and getting it into the runtime.

A choice is stored first, then applied by the `agents.apply_model` task once the transaction
commits (ids only in its arguments): at once to a running agent, and again whenever the runtime
comes up (agent.running, started, restarted) and whenever its key changes (llm.signals).
`applied_at` says when the runtime last took the current choice; `apply_error` why it did not.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from fleet.api.principal import Principal
from fleet.errors import FleetError
from fleet.redaction import REDACTED
from fleet.task_queue import task_named
from llm.models import ProviderKey
from llm.selectors import is_default_key

from ..events import RUNTIME_UP_EVENTS
from ..models import SERVING, Agent, AgentModel, SandboxProfile
from ..selectors import agent_workspace_ids
from .choice import (
    KeyNotUsable,
    ModelChoice,
    agent_choice,
    choice_parse,
    default_choice,
    has_own_model,
    routing_parse,
)
from .runtime import ModelUnsupported, model_unsupported_reason, runtime_model_apply

logger = logging.getLogger(__name__)

APPLY_TASK = "agents.apply_model"  # agents.llm_model.tasks.apply_model

MAX_ERROR_CHARS = 500


def deploy_model_check(value, *, principal: Principal) -> ModelChoice:
    """A deploy's `model`, checked before the agent exists: its only workspace will be a
    workspace API key's own (agents.services.deploy.key_workspace_assign)."""
    workspace_ids = [principal.workspace_id] if principal.is_api_key else []
    return choice_parse(value, principal=principal, workspace_ids=workspace_ids)


def agent_model_store(*, agent: Agent, choice: ModelChoice) -> AgentModel:
    """Store the agent's own model (a deploy's: its runtime gets it when it comes up)."""
    reason = model_unsupported_reason(agent)
    if reason:
        raise ModelUnsupported(reason)
    # The key's row locked: a delete of it either went first (then it is gone) or waits.
    if ProviderKey.objects.select_for_update().filter(pk=choice.key.pk).values_list("pk").first() is None:
        raise KeyNotUsable()
    row, _ = AgentModel.objects.update_or_create(agent=agent, defaults={
        "key": choice.key, "name": choice.name, "fallbacks": list(choice.fallbacks),
        "applied_at": None, "apply_error": "",
    })
    return row


@transaction.atomic
def agent_model_set(*, agent: Agent, choice: ModelChoice, routing: str | None = None) -> AgentModel:
    """Store the agent's own model (and where its calls go, when given); applied after commit
    (to a serving agent at once)."""
    row = agent_model_store(agent=agent, choice=choice)
    if routing is not None and routing != agent.model_routing:
        Agent.objects.filter(pk=agent.pk).update(model_routing=routing, updated_at=timezone.now())
        agent.model_routing = routing
    model_apply_enqueue(agent.pk)
    return row


@transaction.atomic
def agent_model_clear(*, agent: Agent) -> None:
    """Drop the agent's own model: it takes the platform default, or none, at once."""
    AgentModel.objects.filter(agent=agent).delete()
    model_apply_enqueue(agent.pk)


def model_set_from_body(*, principal: Principal, agent: Agent, value) -> AgentModel:
    """PUT /agents/:id/model: the choice checked against the agent's workspaces, then stored;
    `modelRouting` given changes where the runtime's calls go, absent keeps it."""
    routing = None
    if isinstance(value, dict) and "modelRouting" in value:
        value = dict(value)
        routing = routing_parse(value.pop("modelRouting"))
    choice = choice_parse(value, principal=principal, workspace_ids=agent_workspace_ids(agent.pk), field="")
    return agent_model_set(agent=agent, choice=choice, routing=routing)


def model_record(agent: Agent) -> dict:
    """What GET /agents/:id/model shows: the choice (own or the default), never the key."""
    row = AgentModel.objects.filter(agent=agent).select_related("key").first()
    if row is not None:
        return {"keyId": row.key_id, "provider": row.key.provider, "name": row.name,
                "fallbacks": list(row.fallbacks), "source": "agent", "modelRouting": agent.model_routing,
                "appliedAt": row.applied_at, "applyError": row.apply_error or None}
    default = default_choice()
    return {"keyId": default.key.pk if default else None, "provider": default.key.provider if default else None,
            "name": default.name if default else None, "fallbacks": [], "source": "default" if default else "none",
            "modelRouting": agent.model_routing, "appliedAt": None, "applyError": None}


def model_apply_enqueue(agent_id) -> None:
    transaction.on_commit(lambda: task_named(APPLY_TASK).delay(str(agent_id)))


def model_apply(*, agent_id) -> bool:
    """Put the agent's model into its runtime now; False when the agent does not serve (its
    next start applies it). Raises the gateway's and engine's transient errors for a retry."""
    agent = Agent.objects.filter(pk=agent_id).first()
    if agent is None or agent.status not in SERVING:
        return False
    keeps_its_own = agent.sandbox_profile == SandboxProfile.NEMOCLAW or model_unsupported_reason(agent)
    if keeps_its_own and not has_own_model(agent):
        return False  # its sandbox policy's model (sandbox.inference), or an adopted Hermes's own
    stamp = timezone.now()
    try:
        runtime_model_apply(agent, agent_choice(agent))
    except ModelUnsupported as exc:
        _record(agent, applied_at=None, error=exc.message)
        return False
    _record(agent, applied_at=stamp, error="", updated_before=stamp)
    return True


def model_apply_refused(*, agent_id, error: FleetError) -> None:
    """The runtime refused the model for good (or retries ran out): say why on the row, with
    the key cut out should the runtime have echoed it."""
    choice = agent_choice(Agent(pk=agent_id))
    message = error.message
    if choice is not None and choice.key.api_key:
        message = message.replace(choice.key.api_key, REDACTED)
    logger.warning("The model of agent %s was not applied: %s", agent_id, message)
    _record(Agent(pk=agent_id), applied_at=None, error=message)


def _record(agent: Agent, *, applied_at, error: str, updated_before=None) -> None:
    rows = AgentModel.objects.filter(agent_id=agent.pk)
    if updated_before is not None:
        rows = rows.filter(updated_at__lte=updated_before)  # a newer choice waits for its own apply
    rows.update(applied_at=applied_at, apply_error=error[:MAX_ERROR_CHARS])


def agents_to_reapply(key_id) -> list:
    """The serving agents that use `key_id`: by their own choice, or by the platform default."""
    serving = Agent.objects.filter(status__in=SERVING)
    ids = list(serving.filter(llm_model__key_id=key_id).values_list("pk", flat=True))
    if is_default_key(key_id) and default_choice() is not None:
        ids += list(serving.filter(llm_model__isnull=True).exclude(sandbox_profile=SandboxProfile.NEMOCLAW)
                    .values_list("pk", flat=True))
    return ids


def on_key_changed(sender, *, key_id, **kwargs) -> None:
    """llm.signals.key_changed: every serving agent using the key gets it again."""
    ids = agents_to_reapply(key_id)
    if ids:
        AgentModel.objects.filter(agent_id__in=ids).update(applied_at=None)
    for agent_id in ids:
        model_apply_enqueue(agent_id)


def on_key_deleted(sender, *, instance: ProviderKey, **kwargs) -> None:
    """pre_delete of a key (its user or workspace deleted): the agents that used it take the
    platform default, or no model, once the deletion is committed (their choices go with it)."""
    for agent_id in agents_to_reapply(instance.pk):
        model_apply_enqueue(agent_id)


def on_event(event) -> None:
    """After commit: a runtime that came up gets its model (own, or the platform default)."""
    if event.kind not in RUNTIME_UP_EVENTS or event.agent_id is None:
        return
    if AgentModel.objects.filter(agent_id=event.agent_id).exists() or default_choice() is not None:
        model_apply_enqueue(event.agent_id)

