"""Server-sent events on the async edge: the wire format, and the response that streams them.

A view checks access, validates and takes a stream lease synchronously (its refusals are
ordinary JSON errors), then answers `event_stream(events, lease)`: the edge (fleet.edge.wsgi) reads the
async body on the event loop, so a stream that waits holds no thread.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import orjson
from django.conf import settings
from django.http import StreamingHttpResponse

from fleet.errors import Conflict

from .streams import Lease, LeasedStream, stream_open
from .wsgi import EDGE_KEY

EVENT_STREAM = "text/event-stream"
RETRY_MS = 1000  # how soon a browser's EventSource reconnects after a stream ends
AHEAD = 2000  # items read ahead of a slow client before the source waits

# What `paced` yields besides the items: nothing came for a heartbeat's length; the time is up.
QUIET = object()
TIME_UP = object()
_END = object()


def sse(data, *, event: str | None = None, event_id: str | None = None) -> str:
    """One event: `data` as compact JSON on one line (JSON never holds a raw newline)."""
    head = f"event: {event}\n" if event else ""
    if event_id is not None:
        head += f"id: {event_id}\n"
    return f"{head}data: {orjson.dumps(data).decode()}\n\n"


def sse_comment(text: str) -> str:
    """A comment line: ignored by clients, it keeps proxies from closing a quiet stream."""
    return f": {text}\n\n"


def sse_retry(milliseconds: int = RETRY_MS) -> str:
    return f"retry: {milliseconds}\n\n"


def wants_event_stream(request) -> bool:
    return EVENT_STREAM in request.META.get("HTTP_ACCEPT", "")


class StreamsNeedTheEdge(Conflict):
    code = "streams_unavailable"
    default_message = ("Live streams are served by Fleet's ASGI web server (the Procfile's web process); "
                       "this server cannot hold one.")


def event_stream_lease(request, user) -> Lease:
    """A slot for one more event stream of `user` (followed logs and chat turns share the
    STREAM_LIMIT_PER_USER cap), or 429 too_many_streams. A server other than the edge (a WSGI
    server) would read the stream whole before answering: 409 streams_unavailable there."""
    if not request.META.get(EDGE_KEY):
        raise StreamsNeedTheEdge()
    return stream_open(user=user, kind="event-stream", per_user=settings.STREAM_LIMIT_PER_USER)


def event_stream(events: AsyncIterator[str], lease: Lease) -> StreamingHttpResponse:
    """The streaming response of `events`, holding `lease` until it ends or the client leaves."""
    # no-cache: never stored; X-Accel-Buffering: a proxy (nginx) passes events at once.
    return StreamingHttpResponse(LeasedStream(events, lease), content_type=EVENT_STREAM,
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


async def paced(items: AsyncIterator, *, heartbeat_seconds: float, for_seconds: float | None = None) -> AsyncIterator:
    """`items` as they come, QUIET whenever none came for `heartbeat_seconds` (time for a
    heartbeat comment), and TIME_UP once `for_seconds` have passed. The source is read by a
    task of its own, so waiting with a timeout never cancels it in the middle of a read; it is
    closed when the consumer stops."""
    pending: asyncio.Queue = asyncio.Queue(maxsize=AHEAD)

    async def pump() -> None:
        try:
            async for item in items:
                await pending.put(item)
        finally:
            await pending.put(_END)

    reader = asyncio.create_task(pump())
    loop = asyncio.get_running_loop()
    deadline = None if for_seconds is None else loop.time() + for_seconds
    try:
        while True:
            wait = heartbeat_seconds
            if deadline is not None:
                wait = min(wait, deadline - loop.time())
                if wait <= 0:
                    yield TIME_UP
                    return
            try:
                async with asyncio.timeout(wait):
                    item = await pending.get()
            except TimeoutError:
                if deadline is None or loop.time() < deadline:
                    yield QUIET
                continue
            if item is _END:
                if reader.done() and not reader.cancelled() and reader.exception() is not None:
                    raise reader.exception()
                return
            yield item
    finally:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await reader
        close = getattr(items, "aclose", None)
        if close is not None:
            with contextlib.suppress(Exception):
                await close()
