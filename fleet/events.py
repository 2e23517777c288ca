"""Fleet events: `emit()` stores an Event and hands it to two kinds of subscriber.

- In-transaction subscribers (`subscribe(fn, in_transaction=True)`) run inside the emitter's
  transaction right after the Event row is inserted, each in a savepoint of its own: their rows
  commit with the event or not at all, and one that fails rolls back only its own work. Work
  that must wait for the commit (a broker message, an email) they register with
  `transaction.on_commit()`, which a rollback discards. Each costs the emitter statements of its
  own, so none is registered today.
- After-commit subscribers (`subscribe(fn)`) get the event once the transaction has committed.
  Alerts is one: it asks for a dispatch, which matches the events stored since the last one
  against the rules in one statement and marks them (`Event.fanned_out_at`).

A subscriber must not raise into the emitter: its failure is logged and the others still run,
so an alerting fault never breaks the operation that caused the event.

An event about an agent carries the agent's summary `{id, name, status}` under `data["agent"]`,
written by `emit(agent=...)` and read back by `event_agent()`: one key, one shape, for every app
that emits or delivers events.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from datetime import datetime

from django.apps import apps
from django.db import transaction
from django.utils import timezone

from .actors import actor_label
from .models import Event

logger = logging.getLogger(__name__)

AGENT_KEY = "agent"  # where an event's data holds the agent's summary

Subscriber = Callable[[Event], None]
_subscribers: list[Subscriber] = []  # after commit
_in_transaction_subscribers: list[Subscriber] = []


def subscribe(subscriber: Subscriber, *, in_transaction: bool = False) -> None:
    """Register a callable run for every emitted event (idempotent): after commit, or with
    `in_transaction=True` inside the emitter's transaction, in a savepoint."""
    registry = _in_transaction_subscribers if in_transaction else _subscribers
    if subscriber not in registry:
        registry.append(subscriber)


def unsubscribe(subscriber: Subscriber) -> None:
    """Remove the callable, whichever way it was subscribed."""
    for registry in (_subscribers, _in_transaction_subscribers):
        if subscriber in registry:
            registry.remove(subscriber)


def emit(
    kind: str,
    *,
    message: str = "",
    workspace_ids: Iterable = (),
    agent=None,
    data: dict | None = None,
    test: bool = False,
    occurred_at: datetime | None = None,
) -> Event:
    """Store the event `kind` and hand it to the subscribers. `agent` (anything with `pk`,
    `name` and `status`) names the agent it is about; its summary is kept in the event, so
    a delivery still says which agent it was after the agent is deleted."""
    data = dict(data or {})
    if agent is not None:
        data[AGENT_KEY] = agent_summary(agent)
    # No savepoint of our own: inside the emitter's transaction this joins it, in autocommit it
    # is the transaction, so the event and its subscribers' rows cost one commit.
    with transaction.atomic(savepoint=False):
        event = Event.objects.create(
            kind=kind,
            message=message,
            workspace_ids=sorted({str(w) for w in workspace_ids}),
            agent_id=agent.pk if agent is not None else None,
            data=data,
            test=test,
            actor=actor_label(),
            occurred_at=occurred_at or timezone.now(),
        )
        for subscriber in list(_in_transaction_subscribers):
            _run_in_savepoint(subscriber, event)
        transaction.on_commit(lambda: dispatch(event))
    return event


def agent_summary(agent) -> dict:
    """The agent as an event records it. Its deploy target too, when it has one: who may see
    the event once the agent is gone depends on it (a key never sees Remote Docker agents)."""
    summary = {"id": str(agent.pk), "name": agent.name, "status": agent.status}
    deploy_target = getattr(agent, "deploy_target", None)
    if deploy_target:
        summary["deployTarget"] = deploy_target
    return summary


def event_agent(event: Event) -> dict | None:
    """The summary of the agent an event is about: as the agent is now while it exists, else
    as the event recorded it (an `agent.deleted`). Named by app label: fleet imports no app."""
    if event.agent_id is None:
        return None
    current = apps.get_model("agents", "Agent").objects.filter(pk=event.agent_id).values("name", "status").first()
    if current is not None:
        return {"id": str(event.agent_id), **current}
    recorded = recorded_agent(event)
    return {"id": str(event.agent_id), "name": recorded.get("name"), "status": recorded.get("status")}


def recorded_agent(event: Event) -> dict:
    """The agent's summary as the event recorded it ({} for an event about no agent)."""
    recorded = event.data.get(AGENT_KEY) if isinstance(event.data, dict) else None
    return recorded if isinstance(recorded, dict) else {}


def _run_in_savepoint(subscriber: Subscriber, event: Event) -> None:
    try:
        # The savepoint keeps a failed statement from aborting the emitter's transaction, and
        # its rollback also drops the on_commit callbacks the subscriber registered.
        with transaction.atomic():
            subscriber(event)
    except Exception:
        logger.exception("In-transaction event subscriber %r failed for %s", subscriber, event.kind)


def dispatch(event: Event) -> None:
    """Hand a committed event to the after-commit subscribers."""
    for subscriber in list(_subscribers):
        try:
            subscriber(event)
        except Exception:  # one broken subscriber must not starve the others
            logger.exception("Event subscriber %r failed for %s", subscriber, event.kind)
