"""Routes under /api/ (paths have no trailing slash, as in the spec)."""

from django.urls import path

from .api import actions, channels, webhooks

AGENT = "agents/<uuid:agent_id>/channels"

urlpatterns = [
    path(AGENT, channels.AgentChannelsApi.as_view(), name="agent-channels"),
    path(f"{AGENT}/types/<str:type_>", channels.AgentChannelTypeApi.as_view(), name="agent-channel-type"),
    path(f"{AGENT}/<str:cid>", channels.AgentChannelDetailApi.as_view(), name="agent-channel-detail"),
    path(f"{AGENT}/<str:cid>/connect", actions.ChannelConnectApi.as_view(), name="agent-channel-connect"),
    path(f"{AGENT}/<str:cid>/login", actions.ChannelLoginApi.as_view(), name="agent-channel-login"),
    path(f"{AGENT}/<str:cid>/login/wait", actions.ChannelLoginWaitApi.as_view(), name="agent-channel-login-wait"),
    path(f"{AGENT}/<str:cid>/logout", actions.ChannelLogoutApi.as_view(), name="agent-channel-logout"),
    path(f"{AGENT}/<str:cid>/test", actions.ChannelTestApi.as_view(), name="agent-channel-test"),
    path(f"{AGENT}/<str:cid>/messages", actions.ChannelMessagesApi.as_view(), name="agent-channel-messages"),
    path("webhooks/<uuid:channel_id>", webhooks.ChannelWebhookApi.as_view(), name="channel-webhook"),
]
