"""Fleet events: `emit()` stores an Event and, after the transaction commits, hands it
to every subscriber (alerts subscribes in its AppConfig.ready()).

A subscriber must not raise into the emitter: its failure is logged and the others
still run, so an alerting fault never breaks the operation that caused the event.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from .models import Event

logger = logging.getLogger(__name__)

Subscriber = Callable[[Event], None]
_subscribers: list[Subscriber] = []


def subscribe(subscriber: Subscriber) -> None:
    """Register a callable run after commit for every emitted event (idempotent)."""
    if subscriber not in _subscribers:
        _subscribers.append(subscriber)


def unsubscribe(subscriber: Subscriber) -> None:
    if subscriber in _subscribers:
        _subscribers.remove(subscriber)


def emit(
    kind: str,
    *,
    message: str = "",
    workspace_ids: Iterable = (),
    agent_id=None,
    data: dict | None = None,
    test: bool = False,
    occurred_at: datetime | None = None,
) -> Event:
    event = Event.objects.create(
        kind=kind,
        message=message,
        workspace_ids=sorted({str(w) for w in workspace_ids}),
        agent_id=agent_id,
        data=data or {},
        test=test,
        occurred_at=occurred_at or timezone.now(),
    )
    transaction.on_commit(lambda: dispatch(event))
    return event


def dispatch(event: Event) -> None:
    for subscriber in list(_subscribers):
        try:
            subscriber(event)
        except Exception:  # one broken subscriber must not starve the others
            logger.exception("Event subscriber %r failed for %s", subscriber, event.kind)
