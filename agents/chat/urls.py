"""Chat routes, relative to /api/ (no trailing slash)."""

from django.urls import path

from .api import AgentChatApi, ChatMessagesApi, ChatSessionsApi

urlpatterns = [
    path("agents/<uuid:agent_id>/chat", AgentChatApi.as_view(), name="agent-chat"),
    path("agents/<uuid:agent_id>/chat/sessions", ChatSessionsApi.as_view(), name="agent-chat-sessions"),
    path("agents/<uuid:agent_id>/chat/sessions/<str:session_id>/messages", ChatMessagesApi.as_view(),
         name="agent-chat-messages"),
]
