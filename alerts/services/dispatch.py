"""Dispatching new events: one dispatch task per burst of events, not one message per event.

Once an event has committed, fleet.events hands it to `event_dispatch_request()` (an after-commit
subscriber, registered in AlertsConfig.ready()), which calls `dispatch_request()`: it publishes
the `alerts.dispatch_deliveries` task only when it is the one to set the pending flag (an atomic
cache add), so an event costs a cache round trip and a burst of events one broker message. The
task runs `deliveries_dispatch()`: it clears the flag FIRST, then fans out every event still
waiting (services/fanout.py: claimed and matched in one transaction per batch of events,
deliveries inserted in one statement) and publishes the deliveries, one message per channel and
20 of its deliveries (a slow receiver delays no other; the claim in `delivery_attempt` still
decides who sends).

Why no event is left behind: an event is committed before its `dispatch_request()`. Either that
call sets the flag, and the dispatch it publishes claims later, or the flag is already set,
which means some dispatch has not yet cleared it; that dispatch clears it before its claim, so
the claim runs after the event's commit and finds it. A lost dispatch message or an expired flag
only delays events until the next dispatch, or the minute sweep (`deliveries_sweep`).
"""

from __future__ import annotations

from django.core.cache import cache

from fleet.models import Event
from fleet.task_queue import task_named

from .fanout import events_fan_out_and_publish

DISPATCH_TASK = "alerts.dispatch_deliveries"  # the task that calls deliveries_dispatch
DISPATCH_PENDING_KEY = "alerts:dispatch-pending"
# Room for the task to wait in a busy queue; once it expires the next event publishes another
# dispatch, in case this one's message was lost (a spare dispatch finds nothing and is cheap).
DISPATCH_PENDING_SECONDS = 10


def event_dispatch_request(event: Event) -> None:
    """After an event's commit: make sure a dispatch fans it out. An event of no workspace
    matches no rule; the next dispatch or the sweep marks it, with no message of its own."""
    if event.workspace_ids and event.fanned_out_at is None:
        dispatch_request()


def dispatch_request() -> None:
    """Make sure a dispatch will run after this point; call it after the events committed."""
    if not cache.add(DISPATCH_PENDING_KEY, 1, timeout=DISPATCH_PENDING_SECONDS):
        return  # a dispatch that has not started yet will find the new events
    try:
        task_named(DISPATCH_TASK).apply_async()
    except Exception:
        cache.delete(DISPATCH_PENDING_KEY)  # let the next event publish one
        raise


def deliveries_dispatch() -> int:
    """Fan out every waiting event and queue its deliveries; the number queued is returned."""
    cache.delete(DISPATCH_PENDING_KEY)  # before the claim, never after: see the module docstring
    return events_fan_out_and_publish()
