"""The channels app's errors (fleet.errors families: the API maps them once)."""

from __future__ import annotations

from fleet.errors import Conflict, InvalidRequest, NotFound, RuntimeManaged

__all__ = ["ChannelDisabled", "ChannelNotFound", "InboundSecretMissing", "LegacyChannelRoute", "LoginNotAvailable",
           "NoLogout", "PluginUnavailable", "RuntimeManaged", "UnknownType"]


class LegacyChannelRoute(Conflict):
    code = "legacy_channel"
    default_message = "This agent's channels are legacy channels; the route is for runtime-managed channels only."


class ChannelDisabled(Conflict):
    code = "channel_disabled"
    default_message = "The channel is disabled."


class InboundSecretMissing(Conflict):
    """A receiving channel without the secret that verifies its provider's requests: nothing
    unsigned is accepted."""

    code = "inbound_secret_missing"
    default_message = "The channel has no secret to verify inbound requests with."


class PluginUnavailable(Conflict):
    code = "plugin_unavailable"


class LoginNotAvailable(Conflict):
    code = "unsupported"


class NoLogout(InvalidRequest):
    code = "logout_not_supported"


class ChannelNotFound(NotFound):
    default_message = "Channel not found."


class UnknownType(NotFound):
    default_message = "Unknown channel type."
