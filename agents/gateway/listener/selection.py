"""What a listener holds, read from the database (sync: the supervisor runs it in a worker thread).

An agent is held when it is a running or warning OpenClaw agent, at least one registered hook
wants it, and its id hashes to this listener's shard. The connection asks for the union of the
scopes and caps of the hooks that want it, so each agent gets the least its hooks need.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import DatabaseError
from django.db.models import QuerySet

from ...models import SERVING, Agent, RuntimeFamily
from .. import gateway_for
from ..device import DeviceIdentity, installation_device
from ..errors import AgentNotRunning, GatewayUnsupported
from ..hooks import ListenerHook, listener_hooks
from ..openclaw import OpenClawGateway
from .sharding import Shard

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Need:
    """What one agent's connection is for: the hooks that want it and what they ask for."""

    hooks: tuple[str, ...]
    scopes: tuple[str, ...]
    caps: tuple[str, ...]

    @classmethod
    def of(cls, hooks: list[ListenerHook]) -> Need:
        return cls(hooks=tuple(h.name for h in hooks),
                   scopes=tuple(sorted(set().union(*(h.scopes for h in hooks)))),
                   caps=tuple(sorted(set().union(*(h.caps for h in hooks)))))

    @property
    def grant(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """What the handshake asks for: a change needs a new connection."""
        return self.scopes, self.caps


def listener_candidates() -> QuerySet:
    """The agents a listener may hold: running or warning OpenClaw agents."""
    return Agent.objects.filter(status__in=SERVING, runtime_family=RuntimeFamily.OPENCLAW)


def wanted_agents(shard: Shard) -> dict[str, Need]:
    """Agent id -> Need, for every agent of `shard` that some hook wants.

    A database error fails the whole read (the supervisor then keeps what it holds); a hook
    whose `wants` is broken is logged and skipped, so the other hooks' agents are still held.
    """
    wanting: dict[str, list[ListenerHook]] = {}
    for hook in listener_hooks():
        try:
            # Intersected with the candidates: a hook cannot make the listener hold a stopped agent.
            chosen = listener_candidates().filter(pk__in=hook.wants(listener_candidates()).values("pk"))
            ids = list(chosen.values_list("pk", flat=True))
        except DatabaseError:
            raise
        except Exception:
            logger.exception("Listener hook %s could not say which agents it wants; skipped this refresh", hook.name)
            continue
        for pk in ids:
            agent_id = str(pk)
            if shard.owns(agent_id):
                wanting.setdefault(agent_id, []).append(hook)
    return {agent_id: Need.of(hooks) for agent_id, hooks in wanting.items()}


def agent_gateways(agent_ids: list[str]) -> dict[str, OpenClawGateway | Exception]:
    """Each agent's gateway as it is now (its port may have changed since the last connect), or
    why it has none: one query for the agents and one read of the installation's device key,
    however many links asked at once. The key goes into every gateway, so no handshake reads
    the database again. A failure that concerns every agent (the database, the key) raises."""
    agents = {str(agent.pk): agent for agent in Agent.objects.filter(pk__in=agent_ids)}
    device = installation_device() if agents else None
    found: dict[str, OpenClawGateway | Exception] = {}
    for agent_id in agent_ids:
        try:
            found[agent_id] = _gateway_of(agents.get(agent_id), device)
        except Exception as exc:  # one agent's problem is its link's, never its batch's
            found[agent_id] = exc
    return found


def _gateway_of(agent: Agent | None, device: DeviceIdentity | None) -> OpenClawGateway:
    if agent is None:
        raise AgentNotRunning("The agent no longer exists.")
    gateway = gateway_for(agent)  # AgentNotRunning unless running or warning
    if not isinstance(gateway, OpenClawGateway):
        raise GatewayUnsupported(f"The listener holds OpenClaw agents only, not {agent.runtime_family}.")
    return OpenClawGateway(gateway.endpoint, device, timeout=gateway.timeout)
