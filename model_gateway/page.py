"""The agent page's model gateway card: routing, limits, and the last day's calls through Fleet."""

from __future__ import annotations

from django.urls import reverse

from agents.models import Agent

from .models import GatewayLimits
from .services import limits_record
from .traffic import agent_traffic

TEMPLATE = "admin/model_gateway/agent_traffic.html"


def limits_url(agent: Agent) -> str:
    """The console's limits form of the agent: its row's change page, else the add page."""
    if GatewayLimits.objects.filter(agent=agent).exists():
        return reverse("admin:model_gateway_gatewaylimits_change", args=[agent.pk])
    return reverse("admin:model_gateway_gatewaylimits_add") + f"?agent={agent.pk}"


def traffic_card(agent: Agent) -> dict:
    return {"routed": agent.metered_at_gateway, "limits": limits_record(agent), "limits_url": limits_url(agent),
            "traffic": agent_traffic(agent_id=agent.pk, hours=24)}
