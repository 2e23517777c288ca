"""The first handshake with a runtime: its version recorded, a refused token made visible.

The contract rechecks an adopted runtime "when it connects": the first successful handshake
records `runtime_version` and `last_handshake_at`; a runtime that refuses the agent's token puts
the agent in `error` with a readable reason (never the token). Any other failure leaves the
agent as it is; the next monitoring sweep tries again.
"""

from __future__ import annotations

import logging

from django.utils import timezone

from fleet.errors import FleetError

from ..events import agent_event
from ..gateway import GatewayAuthRefused, Handshake, gateway_for
from ..models import Agent, Status
from .transitions import status_swap

logger = logging.getLogger(__name__)


def agent_handshake(*, agent: Agent) -> Handshake | None:
    try:
        handshake = gateway_for(agent, allow_starting=True).handshake()
    except GatewayAuthRefused as exc:
        reason = f"The runtime refused the agent's gateway token: {exc.message}"
        if status_swap(agent.pk, observed=agent.status, new=Status.ERROR, last_error=reason[:2000]):
            agent.status = Status.ERROR
            agent_event(agent, "agent.error", reason, reason=reason)
        return None
    except FleetError as exc:
        logger.info("No handshake with agent %s yet: %s", agent.pk, exc.message)
        return None
    now = timezone.now()
    Agent.objects.filter(pk=agent.pk).update(runtime_version=handshake.version[:50], last_handshake_at=now)
    agent.runtime_version, agent.last_handshake_at = handshake.version[:50], now
    return handshake
