"""A chat turn as server-sent events: `delta {text}`, `tool {name, status}`, `approval {id,
command}`, `error {code, message}`, `done {sessionId, usage}`, and a heartbeat comment while
the runtime thinks. A failure after the stream began (the runtime went away mid-turn) is the
last event, `error`, with the API's own code."""

from __future__ import annotations

from collections.abc import AsyncIterator

from django.conf import settings
from django.http import StreamingHttpResponse

from fleet.edge.sse import QUIET, event_stream, event_stream_lease, paced, sse, sse_comment
from fleet.errors import FleetError

from ..gateway import ChatEvent
from ..models import Agent
from .serializers import ChatUsageOut
from .services import chat_turn


def _data_of(event: ChatEvent) -> dict:
    if event.kind == "done":
        return {**event.data, "usage": ChatUsageOut(event.usage).data if event.usage else None}
    return event.data


async def chat_events(events: AsyncIterator[ChatEvent], *, heartbeat_seconds: float) -> AsyncIterator[str]:
    try:
        async for item in paced(events, heartbeat_seconds=heartbeat_seconds):
            if item is QUIET:
                yield sse_comment("heartbeat")
            else:
                yield sse(_data_of(item), event=item.kind)
    except FleetError as exc:
        yield sse({"code": exc.code, "message": exc.message}, event="error")


def chat_response(request, *, user, agent: Agent, message: str, session_id: str | None) -> StreamingHttpResponse:
    """A turn's answer (the API's and the console's): a stream slot of `user`'s (429 over the
    cap), the agent's gateway resolved now (409/502 as answers), the events on the loop."""
    lease = event_stream_lease(request, user)
    try:
        events = chat_turn(agent=agent, message=message, session_id=session_id)
    except BaseException:
        lease.release()
        raise
    return event_stream(chat_events(events, heartbeat_seconds=settings.LOGS_HEARTBEAT_SECONDS), lease)
