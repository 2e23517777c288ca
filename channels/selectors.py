"""Reads: an agent's channel payload (stored state merged with the runtime's live status), one
type's definition, a legacy channel and its messages."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from agents.gateway import ChannelState
from agents.models import SERVING, Agent
from fleet.errors import FleetError

from .adapters import inbound_secret_field
from .definitions import LOGOUT_TYPES, RUNTIME_LEGACY, RUNTIME_OPENCLAW, Definition, definitions_of
from .errors import ChannelNotFound
from .models import ChannelMessage, LegacyChannel, RuntimeChannel
from .services.common import channel_gateway, definition_of, require_legacy, runtime_of
from .services.runtime import plugin_available

logger = logging.getLogger(__name__)

MESSAGES_DEFAULT, MESSAGES_MAX = 50, 200
WEBHOOK_PATH = "/api/webhooks/{}"

TEXT = {
    RUNTIME_OPENCLAW: ("Runtime channels", ("Channels run by the agent's OpenClaw runtime; Fleet keeps their "
                                            "config and pushes it to the runtime.")),
    RUNTIME_LEGACY: ("Channels", ("Channels Fleet runs for the agent: inbound webhooks become chat turns, replies "
                                  "go back through the channel.")),
}
CAPABILITIES = {
    RUNTIME_OPENCLAW: {"supportsTesting": False, "supportsMessageHistory": False, "supportsArbitraryNames": False,
                       "supportsLazyTypeDefinitions": True},
    RUNTIME_LEGACY: {"supportsTesting": True, "supportsMessageHistory": True, "supportsArbitraryNames": True,
                     "supportsLazyTypeDefinitions": True},
}


@dataclass(frozen=True)
class CatalogRow:
    id: str
    type: str
    name: str
    configured: bool
    enabled: bool
    actions: dict
    linked: bool | None = None
    connected: bool | None = None
    lastError: str | None = None  # noqa: N815 - the payload's own name
    live: bool = False
    available: bool = True
    statusIssues: tuple = ()  # noqa: N815


@dataclass(frozen=True)
class ChannelsPayload:
    runtime: str
    title: str
    description: str
    capabilities: dict
    channels: list
    availableTypes: list = field(default_factory=list)  # noqa: N815
    live: bool = False


def channels_payload(*, agent: Agent) -> ChannelsPayload:
    runtime = runtime_of(agent)
    title, description = TEXT[runtime]
    definitions = definitions_of(runtime)
    available_types = [{"type": d.type, "label": d.label} for d in definitions]
    if runtime == RUNTIME_LEGACY:
        channels = list(LegacyChannel.objects.filter(agent=agent))
        return ChannelsPayload(runtime, title, description, CAPABILITIES[runtime], channels, available_types)
    live = _live_states(agent)
    rows = _catalog(definitions, {c.type: c for c in RuntimeChannel.objects.filter(agent=agent)}, live)
    return ChannelsPayload(runtime, title, description, CAPABILITIES[runtime], rows, available_types,
                           live=live is not None)


def _live_states(agent: Agent) -> dict[str, ChannelState] | None:
    """The runtime's channels.status by channel, or None when it cannot be asked now."""
    if agent.status not in SERVING:
        return None
    try:
        return {state.channel: state for state in channel_gateway(agent).channels_status()}
    except FleetError as exc:
        logger.info("Channel status of agent %s unavailable: %s", agent.pk, exc.message)
        return None


def catalog_row(definition: Definition, stored: RuntimeChannel | None, live: ChannelState | None,
                is_live: bool) -> CatalogRow:
    configured = live.configured if live is not None else stored is not None
    return CatalogRow(
        id=definition.type, type=definition.type, name=definition.label,
        configured=bool(configured),
        enabled=stored.enabled if stored is not None else bool(live and live.configured),
        actions={"canQrLogin": definition.login == "qr", "loginKind": definition.login, "canDelete": False,
                 "canLogout": definition.type in LOGOUT_TYPES},
        linked=live.linked if live is not None else None,
        connected=live.connected if live is not None else None,
        lastError=(live.error or None) if live is not None else None,
        live=is_live,
        available=plugin_available(definition),
        statusIssues=live.issues if live is not None else (),
    )


def _catalog(definitions, stored: dict[str, RuntimeChannel], live: dict[str, ChannelState] | None) -> list:
    states = live or {}
    rows = [catalog_row(d, stored.get(d.type), states.get(d.type), live is not None) for d in definitions]
    known = {d.type for d in definitions}
    for name, state in sorted(states.items()):  # channels the runtime has that Fleet has no definition of
        if name not in known:
            extra = Definition(name, name, "Configured in the runtime.")
            rows.append(catalog_row(extra, None, state, True))
    return rows


def type_definition(*, agent: Agent, type_: str) -> tuple[str, Definition]:
    return runtime_of(agent), definition_of(agent, type_)


def inbound_url(channel: LegacyChannel) -> str | None:
    """Where the channel's provider posts (POST /api/webhooks/<id>): only for a channel that
    receives and holds the secret that verifies those requests."""
    field = inbound_secret_field(channel.type)
    return WEBHOOK_PATH.format(channel.pk) if field and channel.secret_values.get(field) else None


def legacy_channel_get(*, agent: Agent, channel_id) -> LegacyChannel:
    require_legacy(agent)
    channel = LegacyChannel.objects.filter(agent=agent, pk=channel_id).first()
    if channel is None:
        raise ChannelNotFound()
    return channel


def channel_messages(*, channel: LegacyChannel, limit: int = MESSAGES_DEFAULT) -> list[ChannelMessage]:
    return list(ChannelMessage.objects.filter(channel=channel).order_by("-created_at", "-pk")[:limit])
