"""The first handshake with a runtime: its version recorded, a refused token made visible.

The contract rechecks an adopted runtime "when it connects": the first successful handshake
records `runtime_version` and `last_handshake_at`; a runtime that refuses the agent's token puts
the agent in `error` with a readable reason (never the token). Any other failure leaves the
status as it is; for an adopted agent it says why in `last_error` (cleared by the handshake that
succeeds). Adoption publishes `agents.handshake.first` (agents.tasks.first_handshake), which tries at
once and again with a countdown while the runtime cannot be reached; the monitoring sweep tries
too, every period, while no handshake is recorded.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from fleet.errors import FleetError

from ..events import agent_event
from ..gateway import GatewayAuthRefused, Handshake, gateway_for
from ..models import SERVING, Agent, Status
from .transitions import status_swap

logger = logging.getLogger(__name__)

FIRST_HANDSHAKE_TASK = "agents.handshake.first"  # the job that calls agent_first_handshake

NO_HANDSHAKE = "No handshake with the runtime yet: "


def _no_handshake_record(agent: Agent, exc: FleetError) -> None:
    """An adopted agent's `last_error` says why no handshake could be made (status unchanged)."""
    if not agent.is_external:
        return
    reason = (NO_HANDSHAKE + exc.message)[:2000]
    if reason != agent.last_error and Agent.objects.filter(
        pk=agent.pk, status=agent.status, last_handshake_at__isnull=True
    ).update(last_error=reason):
        agent.last_error = reason


def agent_handshake(*, agent: Agent) -> Handshake | None:
    try:
        handshake = gateway_for(agent, allow_starting=True).handshake()
    except GatewayAuthRefused as exc:
        reason = f"The runtime refused the agent's gateway token: {exc.message}"
        with transaction.atomic():  # the status and its event are seen together, or neither
            if status_swap(agent.pk, observed=agent.status, new=Status.ERROR, last_error=reason[:2000]):
                agent.status = Status.ERROR
                agent_event(agent, "agent.error", reason, reason=reason)
        return None
    except FleetError as exc:
        logger.info("No handshake with agent %s yet: %s", agent.pk, exc.message)
        _no_handshake_record(agent, exc)
        return None
    now = timezone.now()
    Agent.objects.filter(pk=agent.pk).update(runtime_version=handshake.version[:50], last_handshake_at=now)
    agent.runtime_version, agent.last_handshake_at = handshake.version[:50], now
    if agent.last_error.startswith(NO_HANDSHAKE):  # the reason it gave before no longer holds
        Agent.objects.filter(pk=agent.pk, last_error=agent.last_error).update(last_error="")
        agent.last_error = ""
    return handshake


def agent_first_handshake(*, agent_id) -> bool:
    """The adoption's handshake (agents.handshake.first). True when nothing is left to do (recorded
    before or now, refused, the agent gone or no longer running); False to try again later."""
    agent = Agent.objects.filter(pk=agent_id).first()
    if agent is None or agent.last_handshake_at is not None or agent.status not in SERVING:
        return True
    agent_handshake(agent=agent)
    return agent.last_handshake_at is not None or agent.status == Status.ERROR
