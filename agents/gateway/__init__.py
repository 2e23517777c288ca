"""The one client of a running runtime (docs/patterns.md).

    gateway = gateway_for(agent)          # RuntimeGateway of the agent's family
    gateway.handshake().version           # "2026.9.6"
    gateway.config_patch({"channels": {...}})
    register_listener_hook(...)           # events of held connections (hooks.py, listener/)

Nothing outside this package knows a runtime's wire format: `gateway_for` picks the family's
implementation from one table, and every failure is a fleet.errors family (errors.py).
"""

from __future__ import annotations

from fleet.errors import FleetError

from ..backends.base import RuntimeBackend
from ..families import FAMILIES, Family, family_of
from ..models import Agent
from .base import (
    Approval,
    ChannelState,
    ChatEvent,
    ChatMessage,
    ChatReply,
    ChatSession,
    ChatUsage,
    Handshake,
    Readiness,
    RuntimeGateway,
    Usage,
    UsageRow,
    as_json,
)
from .endpoint import Endpoint, endpoint_for
from .errors import (
    AgentNotRunning,
    GatewayAuthRefused,
    GatewayDropped,
    GatewayError,
    GatewayProtocolError,
    GatewayUnreachable,
    GatewayUnsupported,
    runtime_not_ready,
)
from .hermes import HermesGateway
from .hooks import ListenerHook, listener_hooks, register_listener_hook, unregister_listener_hook
from .openclaw import OpenClawGateway
from .readiness_async import ReadinessSession, ask_readiness, readiness_session

IMPLEMENTATIONS: dict[str, type[RuntimeGateway]] = {"openclaw": OpenClawGateway, "hermes": HermesGateway}


def gateway_for(agent: Agent, *, allow_starting: bool = False, backend: RuntimeBackend | None = None) -> RuntimeGateway:
    """The agent's gateway client. AgentNotRunning unless it runs (or, with `allow_starting`,
    is being deployed); the engine's errors when its endpoint cannot be resolved. `backend`: the
    agent's, when the caller resolved it already."""
    endpoint = endpoint_for(agent, allow_starting=allow_starting, backend=backend)
    return IMPLEMENTATIONS[endpoint.family.name](endpoint)


def gateway_readiness(agent: Agent, *, allow_starting: bool = False,
                      backend: RuntimeBackend | None = None) -> Readiness:
    """Whether the agent's runtime is ready to serve now (OpenClaw /readyz, Hermes's gateway
    state); a runtime that cannot be asked is not ready, with the reason in `failing`."""
    try:
        return gateway_for(agent, allow_starting=allow_starting, backend=backend).ready()
    except FleetError as exc:  # unreachable, refused, no endpoint: all mean "not ready"
        return Readiness(ready=False, failing=(exc.message,))


async def gateway_readiness_async(agent: Agent, session: ReadinessSession, *, backend: RuntimeBackend) -> Readiness:
    """gateway_readiness() of a provisioned agent, asked on the event loop through `session`
    (readiness_async.readiness_session). `backend` must answer gateway_endpoint() without
    waiting on its engine (the agent's port is recorded), as the caller checks."""
    try:
        gateway = gateway_for(agent, backend=backend)
        return await ask_readiness(session, gateway)
    except FleetError as exc:
        return Readiness(ready=False, failing=(exc.message,))


__all__ = [
    "FAMILIES",
    "IMPLEMENTATIONS",
    "AgentNotRunning",
    "Approval",
    "ChannelState",
    "ChatEvent",
    "ChatMessage",
    "ChatReply",
    "ChatSession",
    "ChatUsage",
    "Endpoint",
    "Family",
    "GatewayAuthRefused",
    "GatewayDropped",
    "GatewayError",
    "GatewayProtocolError",
    "GatewayUnreachable",
    "GatewayUnsupported",
    "Handshake",
    "HermesGateway",
    "ListenerHook",
    "OpenClawGateway",
    "Readiness",
    "RuntimeGateway",
    "Usage",
    "UsageRow",
    "as_json",
    "endpoint_for",
    "family_of",
    "gateway_for",
    "gateway_readiness",
    "gateway_readiness_async",
    "readiness_session",
    "listener_hooks",
    "register_listener_hook",
    "runtime_not_ready",
    "unregister_listener_hook",
]
