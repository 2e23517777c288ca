"""Thin Celery tasks: load by id, call a service, retry while the runtime comes up."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from agents.gateway import AgentNotRunning, runtime_not_ready
from agents.models import Agent
from fleet.errors import FleetError

from .definitions import RUNTIME_OPENCLAW
from .services import (
    inbound_forward,
    pending_inbound_requeue,
    reply_send,
    runtime_channels_reapply,
    stale_inbound_requeue,
)
from .services.common import runtime_of
from .services.inbound import FORWARD_TASK, REPLY_TASK

REAPPLY_MAX_RETRIES = 8
REAPPLY_BACKOFF_SECONDS = 5.0  # doubles each retry, at most 5 minutes


def _backoff(base: float, retries: int) -> float:
    return min(300.0, base * 2 ** retries)


@shared_task(bind=True, name=FORWARD_TASK, acks_late=True, reject_on_worker_lost=True,
             ignore_result=True)
def forward_inbound(self, message_id: str) -> None:
    """One inbound message to the runtime; again later while the agent is starting."""
    outcome = inbound_forward(message_id=message_id)
    if outcome == "retry" and self.request.retries < settings.CHANNELS_FORWARD_MAX_RETRIES:
        raise self.retry(countdown=settings.CHANNELS_FORWARD_RETRY_SECONDS)


@shared_task(name="channels.sweep_inbound", ignore_result=True)
def sweep_inbound() -> int:
    """Beat: inbound messages whose task was lost (a killed worker the broker did not redeliver)."""
    return stale_inbound_requeue()


@shared_task(name=REPLY_TASK, acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def send_reply(message_id: str) -> None:
    reply_send(message_id=message_id)


@shared_task(bind=True, name="channels.reapply", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def reapply(self, agent_id: str) -> None:
    """The agent's stored channel state into its runtime again (after a (re)deploy or a start):
    OpenClaw gets its channel config pushed, a Hermes agent's pending inbound messages go out."""
    agent = Agent.objects.filter(pk=agent_id).first()
    if agent is None:
        return
    if runtime_of(agent) != RUNTIME_OPENCLAW:
        pending_inbound_requeue(agent=agent)
        return
    try:
        runtime_channels_reapply(agent=agent)
    except FleetError as exc:
        # Not up yet, or OpenClaw's "starting" right after the start that queued this.
        later = isinstance(exc, AgentNotRunning) or runtime_not_ready(exc)
        if not later or self.request.retries >= REAPPLY_MAX_RETRIES:
            raise
        raise self.retry(exc=exc, countdown=_backoff(REAPPLY_BACKOFF_SECONDS, self.request.retries)) from exc
