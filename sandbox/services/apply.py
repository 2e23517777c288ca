"""Applying an agent's current policy (and its model configuration) to its running runtime.

Idempotent: the tools and model patch changes nothing the second time (the runtime answers a
no-op), and the exec approvals file is only written when it differs. The policy version applied
gets `applied_at`; a newer version stored meanwhile is applied by its own call.
"""

from __future__ import annotations

import logging

from django.utils import timezone

from agents.gateway import AgentNotRunning, GatewayError, gateway_for, runtime_not_ready
from agents.llm_model.choice import has_own_model
from agents.models import SERVING, Agent, SandboxProfile
from fleet.errors import FleetError
from fleet.task_queue import task_named

from ..inference import inference_key, model_config_patch
from ..models import SandboxPolicy
from ..policy import TOOLS_REPLACE_PATHS, exec_approvals_file, exec_approvals_match, tools_config_patch
from .policies import policy_current

logger = logging.getLogger(__name__)

APPLY_TASK = "sandbox.tasks.sandbox_policy_apply"  # the job that calls policy_apply

def apply_later(exc: Exception) -> bool:
    """Whether the policy may be applied later: the runtime is not up yet, unreachable, or said
    "starting" (OpenClaw refuses connections for a while after it restarts). The task retries these."""
    return isinstance(exc, AgentNotRunning) or runtime_not_ready(exc)


def _merge(into: dict, patch: dict) -> dict:
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value
    return into


def policy_apply(*, agent_id) -> SandboxPolicy | None:
    """Apply the agent's current policy to its runtime; None for an agent that is gone or not
    sandboxed. Raises the gateway's errors (AgentNotRunning, GatewayUnreachable, ...)."""
    agent = Agent.objects.filter(pk=agent_id).first()
    if agent is None or agent.sandbox_profile != SandboxProfile.NEMOCLAW:
        return None
    policy = policy_current(agent)
    document = policy.document
    gateway = gateway_for(agent)
    patch = tools_config_patch(document)
    key = inference_key(agent)
    # Without a key the runtime keeps its model (the status says inference is not configured);
    # a model chosen for the agent itself (agents.llm_model) wins over the policy's.
    if key and not has_own_model(agent):
        _merge(patch, model_config_patch(document["model"], key))
    gateway.config_patch(patch, replace_paths=TOOLS_REPLACE_PATHS)
    _exec_approvals_set(gateway, document)
    SandboxPolicy.objects.filter(pk=policy.pk, applied_at__isnull=True).update(applied_at=timezone.now())
    policy.refresh_from_db()
    return policy


def _exec_approvals_set(gateway, document: dict) -> None:
    """exec.approvals.set with the hash just read; a concurrent change is re-read once."""
    for attempt in (1, 2):
        current = gateway.exec_policy_get()
        if exec_approvals_match(document, current["file"]):
            return
        try:
            gateway.exec_policy_set(exec_approvals_file(document, current["file"]), current["hash"])
            return
        except GatewayError as exc:
            if attempt == 2 or "changed" not in str(exc).lower():
                raise


def policy_apply_enqueue(agent: Agent) -> None:
    """Apply in the background once the transaction commits (retried while the runtime starts)."""
    task_named(APPLY_TASK).delay_on_commit(str(agent.pk))


def policy_apply_now(agent: Agent) -> SandboxPolicy:
    """For a POST: apply at once to a serving agent; when the runtime cannot take it now, the
    background task keeps trying. Answers the current version, applied or not."""
    if agent.status in SERVING:
        try:
            applied = policy_apply(agent_id=agent.pk)
            if applied is not None:
                return applied
        except FleetError as exc:
            if apply_later(exc):
                logger.info("Policy of agent %s not applied now (%s); retrying in the background",
                            agent.pk, exc.message)
                policy_apply_enqueue(agent)
            else:
                logger.warning("The runtime of agent %s refused its sandbox policy: %s", agent.pk, exc.message)
    return policy_current(agent)
