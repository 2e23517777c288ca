"""GET /agents/:id/logs (viewer; keys need agents:read, as for stats): the workload's output
as JSON, or followed live as server-sent events with `Accept: text/event-stream`."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.response import Response

from fleet.api.views import ApiView
from fleet.edge.sse import EVENT_STREAM, wants_event_stream

from ..permissions import AgentReader
from .query import DEFAULT_TAIL, MAX_TAIL, logs_query_from
from .serializers import LogLineOut
from .services import agent_logs_list
from .sse import follow_response, log_line_data


class AgentLogsApi(ApiView):
    access = {"GET": (AgentReader,)}
    # No workload or a target without logs; too many live streams; the engine unreachable.
    documented_errors = (409, 429, 502)

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
            "the client reconnects with Last-Event-ID (EventSource does it itself) or `since`. A user may "
            "hold STREAM_LIMIT_PER_USER live streams (follows and chat turns) at once: one more is 429 "
            "`too_many_streams`."
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
        if wants_event_stream(request):
            query = logs_query_from(request.query_params, last_event_id=request.META.get("HTTP_LAST_EVENT_ID"))
            return follow_response(request, user=self.principal.user, agent=agent, query=query)
        query = logs_query_from(request.query_params)
        lines = agent_logs_list(agent=agent, tail=query.tail, since=query.since)
        return Response([log_line_data(line) for line in lines])
