"""Status changes made without a lock: a compare-and-swap on the status that was observed."""

from __future__ import annotations

from django.utils import timezone

from ..models import Agent


def node_record(agent: Agent, node: str | None) -> bool:
    """Store the node the engine says the agent's workload runs on (base.LiveState.node) when it
    says one and it changed (a pod rescheduled elsewhere); only for the same workload, so a
    reading of the previous one never lands on a redeployed agent. True when it was stored."""
    if not node or node == agent.node or not agent.container_id:
        return False
    node = node[:255]
    stored = Agent.objects.filter(pk=agent.pk, container_id=agent.container_id).update(node=node)
    if stored:
        agent.node = node
    return bool(stored)


def status_swap(agent_id, *, observed: str, new: str, **fields) -> bool:
    """Set `new` only if the row still has the `observed` status; True when it did."""
    return bool(
        Agent.objects.filter(pk=agent_id, status=observed).update(status=new, updated_at=timezone.now(), **fields)
    )
