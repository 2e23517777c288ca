"""Publishing new deliveries: one dispatch task per burst of events, not one message per event.

Once its deliveries have committed with their event, fan-out's on_commit callback calls
`dispatch_request()`, which publishes the `alerts.dispatch_deliveries` task only when it is the
one to set the pending flag (an atomic cache add): an event costs a cache round trip, a burst of
events one broker message. The task
runs `deliveries_dispatch()`: it clears the flag FIRST, then marks every due, not yet queued
delivery as queued and publishes one `alerts.deliver` message per delivery (a slow receiver
delays no other; the claim in `delivery_attempt` still decides who sends).

Why no delivery is left behind: a row is committed before its `dispatch_request()`. Either that
call sets the flag, and the dispatch it publishes queries later, or the flag is already set,
which means some dispatch has not yet cleared it; that dispatch clears it before its query, so
the query runs after the row's commit and finds it. A lost dispatch message or an expired flag
only delays rows until the next dispatch, or the minute sweep (`deliveries_sweep`).
"""

from __future__ import annotations

from datetime import datetime

from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from ..models import Delivery, DeliveryStatus
from ..tasks import dispatch_deliveries
from .enqueue import deliveries_publish

DISPATCH_PENDING_KEY = "alerts:dispatch-pending"
# Room for the task to wait in a busy queue; once it expires the next event publishes another
# dispatch, in case this one's message was lost (a spare dispatch finds nothing and is cheap).
DISPATCH_PENDING_SECONDS = 10
DISPATCH_BATCH = 500  # rows marked per transaction; a dispatch loops until none is left


def dispatch_request() -> None:
    """Make sure a dispatch will run after this point; call it after the deliveries committed."""
    if not cache.add(DISPATCH_PENDING_KEY, 1, timeout=DISPATCH_PENDING_SECONDS):
        return  # a dispatch that has not started yet will find the new rows
    try:
        dispatch_deliveries.apply_async()
    except Exception:
        cache.delete(DISPATCH_PENDING_KEY)  # let the next event publish one
        raise


def deliveries_dispatch(*, now: datetime | None = None) -> int:
    """Queue one deliver task for each due delivery nobody has queued yet; the count is returned."""
    cache.delete(DISPATCH_PENDING_KEY)  # before the query, never after: see the module docstring
    queued = 0
    while True:
        ids = _due_deliveries_mark_queued(now=now or timezone.now())
        # Marked before publishing: a crash in between leaves rows for the sweep, never unsent.
        deliveries_publish(ids)
        queued += len(ids)
        if len(ids) < DISPATCH_BATCH:
            return queued


@transaction.atomic
def _due_deliveries_mark_queued(*, now: datetime) -> list[str]:
    # SKIP LOCKED: two dispatches running at once share the rows instead of queueing them twice.
    due = (
        Delivery.objects.select_for_update(skip_locked=True)
        .filter(status=DeliveryStatus.PENDING, queued_at__isnull=True, next_attempt_at__lte=now)
        .order_by("next_attempt_at")
        .values_list("id", flat=True)[:DISPATCH_BATCH]
    )
    ids = list(due)
    if ids:
        Delivery.objects.filter(pk__in=ids).update(queued_at=now)
    return [str(i) for i in ids]
