"""The edge's side of settling: a call that ended is queued, and one task per event loop hands
the queue in batches (settlement.settle) to a thread of its own, with its own database
connection: admissions, in Django's thread, never wait behind the bookkeeping of calls that
ended. It waits SETTLE_AFTER_SECONDS before each batch, so that the calls ending meanwhile
share one transaction: settling one call costs 3.9 ms of statements and commit, settling 25
together 5.3 ms (measured in-process), and on a busy process that database work is what
competes with the calls still running. The usage is in the cost report and the budgets a
tenth of a second later. Until a call is settled its reservation still counts against the
budgets, so a cap holds throughout. With the database away (a restart, a failover) the calls
stay queued and are tried again until their reservations lapse; the queue is flushed when the
loop's work ends (the server stops), and the allowances this process holds are given back. The
settling thread also grants, closes and cuts down the allowances (allowances.py): after each
batch, and every half of MODEL_GATEWAY_ALLOWANCE_IDLE_SECONDS while one is open."""

from __future__ import annotations

import asyncio
import logging
import weakref
from datetime import timedelta

from django.conf import settings
from django.db import close_old_connections, connections
from django.utils import timezone

from fleet.edge.django_thread import SyncThread

from . import allowances
from .settlement import Ended, settle

logger = logging.getLogger(__name__)

SETTLE_AFTER_SECONDS = 0.1
# With the database away, the calls stay queued and are tried again, each wait twice the last
# up to this; a call still unsettled when its reservation lapses
# (MODEL_GATEWAY_RESERVATION_SECONDS) is given up, with an error in the log.
RETRY_AT_MOST_SECONDS = 5.0
_settling = SyncThread("fleet-model-settle")


def _as_a_request(work, *args):
    """`work(*args)` in the settling thread with its connection handled as a request handles
    Django's: one that broke (its error seen by earlier work) or grew old is replaced before and
    after."""
    close_old_connections()
    try:
        return work(*args)
    finally:
        close_old_connections()


def _settle_batch(batch: list[Ended]) -> list[Ended]:
    """The calls the database was away for, tried once more in between on a new connection (a
    restart drops every connection: a new one usually works straight away). Then the
    allowances' rounds."""
    left = settle(batch)
    if left:
        close_old_connections()
        left = settle(left)
    _tend()
    return left


def _tend(*, closing_all: bool = False) -> None:
    """allowances.tend, its failure logged: an allowance not granted leaves calls reserved one by
    one, one not cut down lapses with its row."""
    try:
        allowances.tend(closing_all=closing_all)
    except Exception:
        logger.exception("Tending the model gateway's allowances failed")


def _still_held(calls: list[Ended]) -> list[Ended]:
    """The calls whose reservation has not lapsed; the others are given up."""
    oldest = timezone.now() - timedelta(seconds=settings.MODEL_GATEWAY_RESERVATION_SECONDS)
    held = []
    for call in calls:
        if call.at > oldest:
            held.append(call)
        else:
            logger.error("Model call %s of agent %s could not be settled before its reservation lapsed: its usage "
                         "is not recorded", call.admission.request_id, call.admission.agent_id)
    return held


class _Queue:
    def __init__(self) -> None:
        self.ended: list[Ended] = []
        self.drainer: asyncio.Task | None = None
        self.tender: asyncio.Task | None = None

    def add(self, call: Ended) -> None:
        self.ended.append(call)
        loop = asyncio.get_running_loop()
        if self.drainer is None or self.drainer.done():
            self.drainer = loop.create_task(self.drain(SETTLE_AFTER_SECONDS))
        if allowances.enabled() and (self.tender is None or self.tender.done()):
            self.tender = loop.create_task(self.tend())

    async def tend(self) -> None:
        """The allowances' rounds while any is open or wanted, when no call ends to bring them
        (an allowance left unused is closed within one and a half times
        MODEL_GATEWAY_ALLOWANCE_IDLE_SECONDS)."""
        while True:
            await asyncio.sleep(settings.MODEL_GATEWAY_ALLOWANCE_IDLE_SECONDS / 2)
            if not allowances.anything_to_tend():
                return
            await _settling.run(_as_a_request, _tend)

    async def drain(self, after: float, *, keep_trying: bool = True) -> None:
        """Settle the queue in batches until it is empty; with `keep_trying`, calls the database
        was away for go back to the queue's head and are tried again after a longer wait."""
        # The wait comes before every batch, not only the first: calls that end while a batch
        # is settled wait for the next, or a steady flow of calls would be settled one or two
        # at a time, back to back (the settling thread never idle, each call paying the whole
        # per-batch cost).
        wait = after
        while True:
            await asyncio.sleep(wait)
            if not self.ended:
                return
            batch, self.ended = self.ended, []
            try:
                left = await _settling.run(_as_a_request, _settle_batch, batch)
            except Exception:
                logger.exception("Settling %d model calls failed", len(batch))
                left = []
            if not left:
                wait = after
                continue
            if not keep_trying:
                logger.error("%d model calls were not settled: the database is away", len(left))
                return
            self.ended = [*_still_held(left), *self.ended]
            wait = min(max(wait * 2, SETTLE_AFTER_SECONDS), RETRY_AT_MOST_SECONDS)


_queues: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # event loop -> _Queue


def settle_later(call: Ended) -> None:
    loop = asyncio.get_running_loop()
    queue = _queues.get(loop)
    if queue is None:
        queue = _queues[loop] = _Queue()
    queue.add(call)


async def flush() -> None:
    """Settle what this loop still holds, then close the settling thread's database connection
    (the edge's shutdown hook: model_gateway/apps.py; nothing is left holding the database)."""
    queue = _queues.get(asyncio.get_running_loop())
    if queue is not None:
        await queue.drain(0, keep_trying=False)
        if queue.tender is not None:
            queue.tender.cancel()
        await _settling.run(_tend, closing_all=True)
        await _settling.run(connections.close_all)
