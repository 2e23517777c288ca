"""The task that puts an agent's model into its runtime (queue `runtime`); its one argument is
the agent's id, never a key."""

from __future__ import annotations

from celery import shared_task

from agents.gateway import AgentNotRunning, runtime_not_ready
from fleet.errors import DaemonUnreachable, FleetError

from .services import APPLY_TASK, model_apply, model_apply_refused

APPLY_MAX_RETRIES = 8  # with backoff 2, 4, ... capped at 30 s: about 3 minutes for a runtime to come up


@shared_task(name=APPLY_TASK, bind=True, acks_late=True, ignore_result=True, max_retries=APPLY_MAX_RETRIES)
def apply_model(self, agent_id: str) -> None:
    """Retried while the runtime is unreachable or says "not now"; an agent that stopped
    meanwhile ends it (its next start applies the model); a refusal is kept on the row."""
    try:
        model_apply(agent_id=agent_id)
    except AgentNotRunning:
        return
    except FleetError as exc:
        transient = runtime_not_ready(exc) or isinstance(exc, DaemonUnreachable)
        if not transient or self.request.retries >= self.max_retries:
            model_apply_refused(agent_id=agent_id, error=exc)
            return
        raise self.retry(exc=exc, countdown=min(30, 2 ** (self.request.retries + 1))) from None
