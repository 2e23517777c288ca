"""Caps on live streams (followed logs, chat turns, terminals, relayed WebSockets).

A stream waits on the event loop and holds no thread, but each still holds memory, a socket and
often a connection to an engine or a runtime: one user may hold at most a few of each kind, across
every web process, and one process at most STREAM_LIMIT_TOTAL in all. Over either cap the caller
gets 429 too_many_streams.

    lease = stream_open(user=request.user, kind="logs", per_user=settings.STREAM_LIMIT_PER_USER)
    return StreamingHttpResponse(LeasedStream(events, lease), ...)   # released when it ends

The per-user count is of StreamLease rows (the database is shared by every process); the
process renews the rows it holds in one UPDATE every RENEW_SECONDS, so the leases of a process
that died lapse after LEASE_SECONDS instead of blocking their user. The per-process count is a
number in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import AsyncIterator
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from fleet.errors import TooManyStreams
from fleet.models import StreamLease

from .django_thread import in_django_thread
from .routes import register_shutdown

logger = logging.getLogger("fleet.edge")

LEASE_SECONDS = 60
RENEW_SECONDS = 20
HOLDER = f"{socket.gethostname()}:{os.getpid()}:{int(time.time())}"[:80]

_lock = threading.Lock()
_held: set = set()  # ids of the leases this process holds
_renewer: asyncio.Task | None = None


class Lease:
    """One held stream. Released once, whichever of its stream's end or its response's close
    comes first (a response the client left before it was read is closed, never iterated)."""

    def __init__(self, lease_id, kind: str):
        self.id = lease_id
        self.kind = kind
        self._released = False

    def release(self) -> None:
        with _lock:
            if self._released:
                return
            self._released = True
            _held.discard(self.id)
        try:
            StreamLease.objects.filter(pk=self.id).delete()
        except Exception:  # the database is away: the lease lapses by itself
            logger.warning("Could not delete a stream lease; it lapses in %s s", LEASE_SECONDS, exc_info=True)

    async def arelease(self) -> None:
        if not self._released:
            await in_django_thread(self.release)

    async def __aenter__(self) -> Lease:
        keep_renewing()
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.arelease()


def _reserve_in_process() -> None:
    with _lock:
        if len(_held) >= settings.STREAM_LIMIT_TOTAL:
            raise TooManyStreams("This server holds as many live streams as it may; try again shortly.")


def stream_open(*, user, kind: str, per_user: int) -> Lease:
    """Take a stream slot of `kind` for `user`, or raise TooManyStreams (429). Sync: call it
    from the view or with sync_to_async before the stream starts."""
    _reserve_in_process()
    now = timezone.now()
    with transaction.atomic():
        # Concurrent opens by one user wait for each other here, so they cannot both see room.
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        live = StreamLease.objects.filter(user_id=user.pk, kind=kind)
        live.filter(expires_at__lte=now).delete()
        if live.count() >= per_user:
            raise _too_many(kind, per_user)
        row = StreamLease.objects.create(user_id=user.pk, kind=kind, holder=HOLDER, opened_at=now,
                                         expires_at=now + timedelta(seconds=LEASE_SECONDS))
    with _lock:
        _held.add(row.pk)
    return Lease(row.pk, kind)


def require_stream_room(*, user, kind: str, per_user: int) -> None:
    """TooManyStreams when `user` holds `per_user` live streams of `kind` already: a check before
    handing out what opens one later (a terminal's ticket). stream_open still decides."""
    if StreamLease.objects.filter(user_id=user.pk, kind=kind, expires_at__gt=timezone.now()).count() >= per_user:
        raise _too_many(kind, per_user)


def _too_many(kind: str, per_user: int) -> TooManyStreams:
    return TooManyStreams(f"You have {per_user} live {kind} streams open, the most allowed; close one first.")


async def astream_open(*, user, kind: str, per_user: int) -> Lease:
    return await in_django_thread(stream_open, user=user, kind=kind, per_user=per_user)


def held_count() -> int:
    """The streams this process holds now (what STREAM_LIMIT_TOTAL caps)."""
    with _lock:
        return len(_held)


def keep_renewing() -> None:
    """Make sure this process's renewer runs on the running loop while it holds leases."""
    global _renewer
    loop = asyncio.get_running_loop()
    # One renewer per process, on the loop that serves: a task of a loop that is gone never runs again.
    if _renewer is None or _renewer.done() or _renewer.get_loop() is not loop:
        _renewer = loop.create_task(_renew_while_held(), name="fleet-stream-leases")


async def stop_renewing() -> None:
    """Cancel the renewer if it runs on this loop (the loop's work is over: its shutdown hook)."""
    renewer = _renewer
    if renewer is not None and not renewer.done() and renewer.get_loop() is asyncio.get_running_loop():
        renewer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renewer


register_shutdown(stop_renewing)


def _renew() -> None:
    with _lock:
        ids = list(_held)
    if ids:
        StreamLease.objects.filter(pk__in=ids).update(expires_at=timezone.now() + timedelta(seconds=LEASE_SECONDS))


async def _renew_while_held() -> None:
    while held_count():
        await asyncio.sleep(RENEW_SECONDS)
        try:
            await in_django_thread(_renew)
        except Exception:
            logger.warning("Renewing this process's stream leases failed; trying again", exc_info=True)


class LeasedStream:
    """A streaming response body that holds `lease` while it is read: give it to
    StreamingHttpResponse. Django registers its close() too, which releases a lease whose
    body was never read."""

    def __init__(self, body: AsyncIterator, lease: Lease):
        self._body = body
        self._lease = lease

    def __aiter__(self):
        return self._iterate()

    async def _iterate(self):
        try:
            async with self._lease:
                async for chunk in self._body:
                    yield chunk
        finally:
            close = getattr(self._body, "aclose", None)
            if close is not None:
                await close()

    def close(self) -> None:
        self._lease.release()
