"""The errors of integrations, as fleet.errors families (the API maps them once)."""

from __future__ import annotations

from fleet.errors import Conflict, InvalidRequest


class AlreadyConnected(Conflict):
    code = "conflict"
    default_message = "The agent already has this integration; change it with PATCH."


class OAuthRequired(InvalidRequest):
    code = "oauth_required"
    default_message = "This provider connects through OAuth 2.0: start the authorization instead."


class McpUnsupported(Conflict):
    code = "unsupported"
    default_message = "MCP servers are applied to OpenClaw agents only."


class OAuthStateInvalid(InvalidRequest):
    code = "invalid_oauth_state"
    default_message = "The authorization state is unknown, expired or already used; start again."


class OAuthFailed(InvalidRequest):
    code = "oauth_failed"
    default_message = "The provider did not complete the authorization."


class SyncUnsupported(Conflict):
    code = "unsupported"
    default_message = "The agent's runtime cannot receive the integrations' environment."
