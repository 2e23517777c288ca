"""POST /webhooks/:channelId (public): a provider delivers a message to a legacy channel.

Order of checks: unknown channel 404, over the rate 429 (per channel), body over the cap 413,
disabled 409 channel_disabled, no secret to verify with 409 inbound_secret_missing, missing or
bad signature 401 (all before anything is stored); then 202 {received, messageId}. Slack's
url_verification gets its challenge back (200). Nothing is accepted unsigned.
"""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.parsers import BaseParser
from rest_framework.response import Response

from fleet.api.bodies import raw_body
from fleet.api.throttling import IPRateThrottle
from fleet.api.views import PUBLIC, PublicApiView

from .. import services
from .serializers import ChallengeAnswerOut, WebhookAcceptedOut


class ChannelRateThrottle(IPRateThrottle):
    """CHANNELS_WEBHOOK_RATE requests per channel, whoever sends them."""

    scope = "channel_webhook"

    def __init__(self):
        self.rate = settings.CHANNELS_WEBHOOK_RATE  # read per request, so a changed setting applies
        super().__init__()

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": str(view.kwargs.get("channel_id"))}


class RawBodyParser(BaseParser):
    """Any media type: the body is read raw by the view (signatures are over the exact bytes)."""

    media_type = "*/*"

    def parse(self, stream, media_type=None, parser_context=None):
        return None


class ChannelWebhookApi(PublicApiView):
    request_examples = {
        "POST": {
            "A message to the agent": {"text": "Is the nightly build green?", "sender": "ops"},
        },
    }
    documented_errors = (401, 409)
    audited = False  # a provider's inbound traffic, not a change (docs/audit.md)
    access = {"POST": PUBLIC}
    throttle_classes = [ChannelRateThrottle]
    parser_classes = [RawBodyParser]

    @extend_schema(
        summary="Inbound message for a legacy channel (public)",
        description="Every request is verified by the channel's secret (Telegram's secret token, Slack's signing "
                    "secret, Standard Webhooks); a channel without one answers 409 inbound_secret_missing.",
        request={"application/json": dict},
        responses={202: WebhookAcceptedOut,
                   200: OpenApiResponse(ChallengeAnswerOut, description="Slack url_verification")},
    )
    def post(self, request, channel_id):
        channel = services.receiving_channel(channel_id)
        limit = settings.CHANNELS_WEBHOOK_MAX_BYTES
        body = raw_body(request, limit, too_large=f"The body is larger than {limit // 1024} KB.")
        received = services.webhook_receive(channel=channel, headers=request.headers, body=body)
        if received.handshake is not None:
            return Response(received.handshake)
        message_id = received.message.pk if received.message else None
        return Response(WebhookAcceptedOut({"received": True, "messageId": message_id}).data,
                        status=status.HTTP_202_ACCEPTED)
