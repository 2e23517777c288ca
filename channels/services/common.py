"""What every channel service needs: which kind of channels an agent has, and its gateway."""

from __future__ import annotations

from django.conf import settings

from agents.gateway import RuntimeGateway, family_of, gateway_for
from agents.models import Agent

from ..definitions import RUNTIME_LEGACY, RUNTIME_OPENCLAW, Definition, definition_for
from ..errors import LegacyChannelRoute, RuntimeManaged, UnknownType


def runtime_of(agent: Agent) -> str:
    """`openclaw` (runtime-managed channels) or `legacy` (Fleet's adapters) for the agent."""
    return RUNTIME_OPENCLAW if family_of(agent.runtime_family).manages_channels else RUNTIME_LEGACY


def require_openclaw(agent: Agent) -> None:
    if runtime_of(agent) != RUNTIME_OPENCLAW:
        raise LegacyChannelRoute()


def require_legacy(agent: Agent) -> None:
    if runtime_of(agent) != RUNTIME_LEGACY:
        raise RuntimeManaged()


def definition_of(agent: Agent, type_: str) -> Definition:
    definition = definition_for(runtime_of(agent), type_)
    if definition is None:
        raise UnknownType(f"Unknown channel type {type_!r} for {runtime_of(agent)} channels.")
    return definition


def channel_gateway(agent: Agent) -> RuntimeGateway:
    """The agent's gateway with the longer budget channel calls need (AgentNotRunning unless it runs)."""
    gateway = gateway_for(agent)
    gateway.timeout = max(gateway.timeout, settings.CHANNELS_GATEWAY_TIMEOUT_SECONDS)
    return gateway
