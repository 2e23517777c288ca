"""A followed log as server-sent events, read on the event loop (fleet.edge.sse).

One event per line (its `id` is the line's ts, so an EventSource that reconnects sends it back as
Last-Event-ID and the next follow starts after it), a heartbeat comment when the workload is
quiet (proxies keep the stream open; a client that left is noticed), `event: end` when the
workload's output ends (its container stopped), and after LOGS_FOLLOW_SECONDS `event: reconnect`,
whose id tells the client where to resume: a follow is long, never endless, so its engine
connection and its stream lease are renewed from time to time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime

from django.conf import settings
from django.http import StreamingHttpResponse
from django.utils import timezone

from fleet.edge.sse import QUIET, TIME_UP, event_stream, event_stream_lease, paced, sse, sse_comment, sse_retry

from ..backends.base import LogLine
from ..models import Agent
from .query import LogsQuery
from .services import agent_logs_follow


def iso(ts: datetime) -> str:
    return ts.isoformat().replace("+00:00", "Z")


def log_line_data(line: LogLine) -> dict:
    return {"ts": iso(line.ts), "stream": line.stream, "line": line.line}


async def log_events(lines: AsyncIterator[LogLine], *, follow_seconds: float, heartbeat_seconds: float,
                     started_at: datetime) -> AsyncIterator[str]:
    """The SSE body of a follow of `lines`."""
    last_id = iso(started_at)
    yield sse_retry()
    async for item in paced(lines, heartbeat_seconds=heartbeat_seconds, for_seconds=follow_seconds):
        if item is QUIET:
            yield sse_comment("heartbeat")
        elif item is TIME_UP:
            yield sse({}, event="reconnect", event_id=last_id)
            return
        else:
            data = log_line_data(item)
            last_id = data["ts"]
            yield sse(data, event_id=last_id)
    yield sse({}, event="end")


def follow_response(request, *, user, agent: Agent, query: LogsQuery) -> StreamingHttpResponse:
    """The live follow's answer (the API's and the console's): a stream slot of `user`'s (429
    over the cap), the engine asked now (its refusals are answers), the events on the loop."""
    lease = event_stream_lease(request, user)
    try:
        lines = agent_logs_follow(agent=agent, tail=query.tail, since=query.since)
    except BaseException:
        lease.release()
        raise
    events = log_events(lines, follow_seconds=settings.LOGS_FOLLOW_SECONDS,
                        heartbeat_seconds=settings.LOGS_HEARTBEAT_SECONDS, started_at=timezone.now())
    return event_stream(events, lease)
