"""Actions on one channel: connect/login/login-wait/logout (runtime-managed, 409 legacy_channel on
a Hermes agent), test and messages (legacy, 409 runtime_managed on an OpenClaw agent)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from agents.permissions import AgentOperator, AgentReader
from fleet.api.throttling import relay_test_throttle
from fleet.api.views import ApiView

from .. import selectors, services
from .channels import _valid, legacy_channel
from .serializers import LoginOut, LoginWaitIn, LoginWaitOut, LogoutOut, MessageOut, MessagesQuery, TestOut

LOGIN_DESCRIPTION = ("WhatsApp: QR pairing through the runtime (web.login.start). Zalo Personal: OpenClaw's CLI "
                     "login run inside the workload from a fixed allowlist, its QR image as a data URL. A failure "
                     "the runtime or the CLI reports (no network, no provider) is 502 gateway_error with its "
                     "message. 409 agent_not_running, legacy_channel, unsupported (Feishu/Lark: an interactive "
                     "wizard); 400 for types without a login.")


class ChannelConnectApi(ApiView):
    documented_errors = (409, 502)
    access = {"POST": (AgentOperator,)}
    force = False

    @extend_schema(summary="Start linking a runtime channel", description=LOGIN_DESCRIPTION, request=None,
                   responses=LoginOut)
    def post(self, request, agent_id, cid):
        result = services.runtime_channel_login(agent=request.agent_access.agent, type_=cid, force=self.force)
        return Response(LoginOut(result).data)


class ChannelLoginApi(ChannelConnectApi):
    documented_errors = (409, 502)
    force = True  # a fresh QR even when a pairing is under way


class ChannelLoginWaitApi(ApiView):
    request_examples = {
        "POST": {
            "Wait for the scan of the QR shown": {"currentQrDataUrl": "data:image/png;base64,<the QR's data>"},
        },
    }
    documented_errors = (409, 502)
    audited = False  # waits on the runtime for a scan; changes nothing in Fleet (docs/audit.md)
    access = {"POST": (AgentOperator,)}

    @extend_schema(summary="Wait for a QR pairing to finish", request=LoginWaitIn, responses=LoginWaitOut)
    def post(self, request, agent_id, cid):
        body = _valid(LoginWaitIn, request.data)
        result = services.runtime_channel_login_wait(agent=request.agent_access.agent, type_=cid,
                                                     current_qr=body.get("currentQrDataUrl") or None)
        return Response(LoginWaitOut(result).data)


class ChannelLogoutApi(ApiView):
    documented_errors = (409, 502)
    access = {"POST": (AgentOperator,)}

    @extend_schema(summary="Log a runtime channel out (whatsapp, telegram, qqbot)", request=None,
                   responses=LogoutOut)
    def post(self, request, agent_id, cid):
        return Response(LogoutOut(services.runtime_channel_logout(agent=request.agent_access.agent,
                                                                  type_=cid)).data)


class ChannelTestApi(ApiView):
    documented_errors = (409, 429, 502)
    access = {"POST": (AgentOperator,)}

    @extend_schema(summary="Send a real test message through a legacy channel", request=None, responses=TestOut,
                   description="Throttled as the alert-rule test (one rule: ALERT_TEST_RATE_PER_RULE per channel, "
                               "ALERT_TEST_RATE_PER_USER across both routes, ALERT_TEST_RECIPIENTS_PER_HOUR per "
                               "agent owner): 429 rate_limited.")
    def post(self, request, agent_id, cid):
        agent = request.agent_access.agent
        channel = legacy_channel(agent, cid)
        # A test relays mail and webhooks on demand: the relay rule, recipients per agent owner.
        relay_test_throttle(subject=f"channel:{channel.pk}", user_id=self.principal.user.pk,
                            recipients_holder=f"user:{agent.owner_id}",
                            recipients=services.legacy_channel_test_recipients(channel=channel))
        result = services.legacy_channel_test(channel=channel)
        body = {"success": result.succeeded, **({"error": result.error} if not result.succeeded else {})}
        return Response(TestOut(body).data)


class ChannelMessagesApi(ApiView):
    documented_errors = (409, 502)
    access = {"GET": (AgentReader,)}

    @extend_schema(summary="A legacy channel's messages, newest first", parameters=[MessagesQuery],
                   responses=MessageOut(many=True))
    def get(self, request, agent_id, cid):
        query = _valid(MessagesQuery, request.query_params)
        channel = legacy_channel(request.agent_access.agent, cid)
        return Response(MessageOut(selectors.channel_messages(channel=channel, limit=query["limit"]), many=True).data)
