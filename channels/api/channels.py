"""GET/POST /agents/:id/channels, GET .../channels/types/:type, PATCH/DELETE .../channels/:cid.

`:cid` is the channel type for an OpenClaw agent's runtime-managed channels and the channel's
UUID for a Hermes agent's legacy channels. Readers read; operators (editors) write.
"""

from __future__ import annotations

import uuid

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from agents.permissions import AgentOperator, AgentReader
from fleet.api.serializers import SuccessOut
from fleet.api.views import ApiView

from .. import selectors, services
from ..definitions import RUNTIME_OPENCLAW
from ..errors import ChannelNotFound
from ..services.common import runtime_of
from ..services.runtime import plugin_available
from .serializers import (
    ChannelPatchIn,
    ChannelSaveIn,
    ChannelsPayloadOut,
    LegacyChannelOut,
    RuntimeSaveOut,
    TypeDefinitionOut,
)


def _valid(serializer_class, data):
    body = serializer_class(data=data)
    body.is_valid(raise_exception=True)
    return body.validated_data


def legacy_channel(agent, cid: str):
    """The agent's legacy channel `cid` (409 runtime_managed on an OpenClaw agent, 404 unknown)."""
    try:
        channel_id = uuid.UUID(str(cid))
    except ValueError:
        channel_id = None
    if runtime_of(agent) == RUNTIME_OPENCLAW or channel_id is not None:
        return selectors.legacy_channel_get(agent=agent, channel_id=channel_id)
    raise ChannelNotFound()


def runtime_save_answer(agent, result) -> Response:
    payload = selectors.channels_payload(agent=agent)
    row = next(r for r in payload.channels if r.type == result.channel.type)
    return Response(RuntimeSaveOut({"success": True, "channel": row, "restart": result.restart}).data)


class AgentChannelsApi(ApiView):
    request_examples = {
        "POST": {
            "Telegram on an OpenClaw agent": {
                "type": "telegram", "config": {"botToken": "<token from @BotFather>"}, "enabled": True,
            },
            "A webhook channel on a Hermes agent": {
                "type": "webhook", "name": "ops", "config": {"url": "https://hooks.example.com/agent"},
            },
        },
    }
    documented_errors = (409, 502)
    access = {"GET": (AgentReader,), "POST": (AgentOperator,)}

    @extend_schema(summary="The agent's channels", responses=ChannelsPayloadOut)
    def get(self, request, agent_id):
        payload = selectors.channels_payload(agent=request.agent_access.agent)
        return Response(ChannelsPayloadOut(payload).data)

    @extend_schema(
        summary="Save a runtime channel (openclaw) or create a channel (legacy)",
        description="openclaw: validates, stores (secrets encrypted) and pushes the config with config.patch; "
                    "answers {success, channel, restart}. legacy: 201 with the channel record.",
        request=ChannelSaveIn,
        responses={200: RuntimeSaveOut, 201: LegacyChannelOut},
    )
    def post(self, request, agent_id):
        agent = request.agent_access.agent
        body = _valid(ChannelSaveIn, request.data)
        if runtime_of(agent) == RUNTIME_OPENCLAW:
            result = services.runtime_channel_save(agent=agent, type_=body["type"], config=body.get("config"),
                                                   enabled=body.get("enabled", True))
            return runtime_save_answer(agent, result)
        channel = services.legacy_channel_create(agent=agent, type_=body["type"], config=body.get("config"),
                                                 enabled=body.get("enabled", True), name=body.get("name"))
        return Response(LegacyChannelOut(channel).data, status=status.HTTP_201_CREATED)


class AgentChannelTypeApi(ApiView):
    documented_errors = (409, 502)
    access = {"GET": (AgentReader,)}

    @extend_schema(summary="One channel type's definition", responses=TypeDefinitionOut)
    def get(self, request, agent_id, type_):
        runtime, definition = selectors.type_definition(agent=request.agent_access.agent, type_=type_)
        return Response(TypeDefinitionOut({
            "runtime": runtime, "type": definition.type, "label": definition.label,
            "description": definition.description, "config_fields": definition.config_fields,
            "login": definition.login, "can_logout": definition.can_logout, "receives": definition.receives,
            "plugin": definition.plugin, "available": plugin_available(definition),
        }).data)


class AgentChannelDetailApi(ApiView):
    request_examples = {
        "PATCH": {
            "Switch it off": {"enabled": False},
        },
    }
    documented_errors = (409, 502)
    access = {"PATCH": (AgentOperator,), "DELETE": (AgentOperator,)}

    @extend_schema(summary="Save config or toggle enabled", request=ChannelPatchIn,
                   responses={200: RuntimeSaveOut})
    def patch(self, request, agent_id, cid):
        agent = request.agent_access.agent
        body = _valid(ChannelPatchIn, request.data)
        if runtime_of(agent) == RUNTIME_OPENCLAW:
            result = services.runtime_channel_save(agent=agent, type_=cid, config=body.get("config"),
                                                   enabled=body.get("enabled"), partial=True)
            return runtime_save_answer(agent, result)
        channel = services.legacy_channel_update(channel=legacy_channel(agent, cid), config=body.get("config"),
                                                 enabled=body.get("enabled"), name=body.get("name"))
        return Response(LegacyChannelOut(channel).data)

    @extend_schema(summary="Delete a legacy channel", responses={200: SuccessOut})
    def delete(self, request, agent_id, cid):
        services.legacy_channel_delete(channel=legacy_channel(request.agent_access.agent, cid))
        return Response(SuccessOut({"success": True}).data)
