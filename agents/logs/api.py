"""GET /agents/:id/logs (viewer; keys need agents:read, as for stats): the workload's output
as JSON, or followed live as server-sent events with `Accept: text/event-stream`."""

from __future__ import annotations

from django.conf import settings
from django.http import StreamingHttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.response import Response

from fleet.api.views import ApiView

from ..api.access import AgentReader
from .query import DEFAULT_TAIL, MAX_TAIL, logs_query_from
from .serializers import LogLineOut
from .services import agent_logs_follow, agent_logs_list
from .sse import log_line_data, sse_events

EVENT_STREAM = "text/event-stream"


def wants_events(request) -> bool:
    return EVENT_STREAM in request.META.get("HTTP_ACCEPT", "")


def event_stream_response(lines, *, started_at) -> StreamingHttpResponse:
    """The SSE response of a follow: it holds this web worker until it ends (LOGS_FOLLOW_SECONDS)."""
    events = sse_events(lines, follow_seconds=settings.LOGS_FOLLOW_SECONDS,
                        heartbeat_seconds=settings.LOGS_HEARTBEAT_SECONDS, started_at=started_at)
    # no-cache: never stored; X-Accel-Buffering: a proxy (nginx) passes events at once.
    return StreamingHttpResponse(events, content_type=EVENT_STREAM,
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


class AgentLogsApi(ApiView):
    access = {"GET": (AgentReader,)}
    documented_errors = (409, 502)  # no workload or a target without logs; the engine unreachable

    def perform_content_negotiation(self, request, force=False):
        # Only JSON is rendered; an `Accept: text/event-stream` caller still gets JSON errors.
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(
        summary="The agent's workload output, oldest first (or followed live as server-sent events)",
        description=(
            f"The last `tail` lines (default {DEFAULT_TAIL}, at most {MAX_TAIL}) written at or after `since`. "
            "With `Accept: text/event-stream` the answer is an event stream: one event per line (its `id` "
            "is the line's ts, its data the same object as here), a heartbeat comment when quiet, "
            "`event: end` when the workload's output ends, and after LOGS_FOLLOW_SECONDS `event: reconnect`: "
            "the client reconnects with Last-Event-ID (EventSource does it itself) or `since`. A follow holds "
            "one of the server's web workers (each serves one request at a time) for as long as it lasts: "
            "to watch a workload without holding one, ask again with `since` set to the last line's `ts`."
        ),
        parameters=[
            OpenApiParameter("tail", int, default=DEFAULT_TAIL, description=f"0 to {MAX_TAIL} lines"),
            OpenApiParameter("since", str, description="ISO 8601 or Unix seconds"),
        ],
        responses={200: OpenApiResponse(LogLineOut(many=True), description="JSON lines; with Accept: "
                                        "text/event-stream a live event stream of the same objects"),
                   (200, EVENT_STREAM): OpenApiTypes.STR},
    )
    def get(self, request, agent_id):
        agent = request.agent_access.agent
        if wants_events(request):
            query = logs_query_from(request.query_params, last_event_id=request.META.get("HTTP_LAST_EVENT_ID"))
            started_at = timezone.now()
            lines = agent_logs_follow(agent=agent, tail=query.tail, since=query.since)
            return event_stream_response(lines, started_at=started_at)
        query = logs_query_from(request.query_params)
        lines = agent_logs_list(agent=agent, tail=query.tail, since=query.since)
        return Response([log_line_data(line) for line in lines])
