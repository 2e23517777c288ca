"""Thin Celery tasks: load by id, call a service. Arguments are ids only, never a credential."""

from __future__ import annotations

import logging

from celery import shared_task

from agents.gateway import AgentNotRunning, GatewayError, GatewayUnreachable, runtime_not_ready
from agents.models import SERVING, Agent

from .services import oauth_refresh, refresh_due, runtime_state_apply
from .services.connections import APPLY_TASK

logger = logging.getLogger(__name__)

APPLY_MAX_RETRIES = 8  # with backoff 2, 4, ... capped at 30 s: about 3 minutes for a runtime to come up
REFRESH_TASK = "integrations.refresh_oauth_tokens"


@shared_task(name=APPLY_TASK, bind=True, acks_late=True, ignore_result=True,
             max_retries=APPLY_MAX_RETRIES)
def apply_runtime_state(self, agent_id: str, include_mcp: bool = True) -> None:
    """Put the integrations' variables (and MCP servers) into the agent's runtime. Retries while
    the runtime is unreachable or says "not now"; an agent that no longer runs ends it."""
    agent = Agent.objects.filter(pk=agent_id).first()
    if agent is None or agent.status not in SERVING:
        return
    try:
        runtime_state_apply(agent=agent, include_mcp=include_mcp)
    except AgentNotRunning:
        return
    except (GatewayUnreachable, GatewayError) as exc:
        if not runtime_not_ready(exc):
            logger.warning("Integrations could not be applied to agent %s: %s", agent_id, exc.message)
            return
        raise self.retry(exc=exc, countdown=min(30, 2 ** (self.request.retries + 1))) from None


@shared_task(name=REFRESH_TASK, ignore_result=True)
def refresh_oauth_tokens() -> int:
    """Beat: queue a refresh of every OAuth token close to its expiry."""
    due = refresh_due()
    for integration_id in due:
        refresh_oauth_token.delay(integration_id)
    return len(due)


@shared_task(name="integrations.refresh_oauth_token", acks_late=True, ignore_result=True)
def refresh_oauth_token(integration_id: str) -> None:
    oauth_refresh(integration_id=integration_id)
