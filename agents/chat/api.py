"""POST /agents/:id/chat (editors; keys agents:write): one turn, streamed as server-sent events.
GET /agents/:id/chat/sessions and .../chat/sessions/:sid/messages: the runtime's own history,
read by the same people (a conversation is the operators' own)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.response import Response

from fleet.api.views import ApiView
from fleet.edge.sse import EVENT_STREAM

from ..permissions import AgentOperator
from .serializers import ChatIn, ChatMessageOut, ChatSessionOut
from .services import chat_message_list, chat_session_list
from .sse import chat_response


class AgentChatApi(ApiView):
    request_examples = {
        "POST": {
            "A first turn": {"message": "Summarise the open tickets in three lines."},
            "The next turn of that session": {
                "message": "And the oldest one?", "sessionId": "<sessionId from the first turn's done>",
            },
        },
    }
    audited = False  # a stream: the turn is a conversation, not a change (docs/audit.md)
    access = {"POST": (AgentOperator,)}
    documented_errors = (409, 429, 502)  # not running or no chat; too many streams; gateway down

    @extend_schema(
        summary="Talk to the agent: one turn, streamed as server-sent events",
        description=(
            "The answer is `text/event-stream`: `delta {text}` as the agent writes, `tool {name, status}` as it "
            "uses a tool, `approval {id, command}` when a sandbox asks an operator, `error {code, message}` when "
            "the turn fails, and last `done {sessionId, usage}` (`usage`: `{model, provider, inputTokens, "
            "outputTokens, costUsd}` or null). Give `sessionId` (from an earlier `done`) to continue a "
            "conversation. The turn's usage reaches the usage store and budgets like any other. A turn counts "
            "against STREAM_LIMIT_PER_USER live streams: one more is 429 `too_many_streams`."
        ),
        request=ChatIn,
        responses={(200, EVENT_STREAM): OpenApiResponse(OpenApiTypes.STR, description="The turn's events")},
    )
    def post(self, request, agent_id):
        body = ChatIn(data=request.data)
        body.is_valid(raise_exception=True)
        return chat_response(request, user=self.principal.user, agent=request.agent_access.agent,
                             message=body.validated_data["message"], session_id=body.validated_data.get("sessionId"))


class ChatSessionsApi(ApiView):
    access = {"GET": (AgentOperator,)}
    documented_errors = (409, 502)

    @extend_schema(summary="The agent's conversations, as its runtime keeps them", responses=ChatSessionOut(many=True))
    def get(self, request, agent_id):
        return Response(ChatSessionOut(chat_session_list(agent=request.agent_access.agent), many=True).data)


class ChatMessagesApi(ApiView):
    access = {"GET": (AgentOperator,)}
    documented_errors = (409, 502)

    @extend_schema(summary="One conversation's messages, oldest first", responses=ChatMessageOut(many=True))
    def get(self, request, agent_id, session_id):
        messages = chat_message_list(agent=request.agent_access.agent, session_id=session_id)
        return Response(ChatMessageOut(messages, many=True).data)
