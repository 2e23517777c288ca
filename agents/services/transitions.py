"""Status changes made without a lock: a compare-and-swap on the status that was observed."""

from __future__ import annotations

from django.utils import timezone

from ..models import Agent


def status_swap(agent_id, *, observed: str, new: str, **fields) -> bool:
    """Set `new` only if the row still has the `observed` status; True when it did."""
    return bool(
        Agent.objects.filter(pk=agent_id, status=observed).update(status=new, updated_at=timezone.now(), **fields)
    )
