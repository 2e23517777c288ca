"""What a gateway call can fail with, as fleet.errors families (the API maps them once).

Messages are for people and never carry a secret: every text that came from a runtime or a
transport goes through `scrub()` with the secrets of the call before it lands in an error.
"""

from __future__ import annotations

from collections.abc import Iterable

from fleet.errors import Conflict, UpstreamFailure

REDACTED = "[redacted]"


class AgentNotRunning(Conflict):
    code = "agent_not_running"
    default_message = "The agent is not running."


class GatewayUnsupported(Conflict):
    code = "unsupported"
    default_message = "The agent's runtime does not support this operation."


class GatewayUnreachable(UpstreamFailure):
    """No answer: refused, reset, timed out, or an address the control plane may not use."""

    code = "gateway_unreachable"
    default_message = "The agent's gateway could not be reached."
    retryable = False  # True when the runtime said "not now" (starting, draining, restarting)


class GatewayError(UpstreamFailure):
    """The runtime answered and refused. `runtime_code`/`detail_code` are its own codes."""

    code = "gateway_error"
    default_message = "The agent's gateway refused the request."

    def __init__(self, message: str | None = None, *, runtime_code: str = "", detail_code: str = "",
                 retryable: bool = False, retry_after: float | None = None, status: int | None = None):
        super().__init__(message)
        self.runtime_code = runtime_code
        self.detail_code = detail_code
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status


class GatewayAuthRefused(GatewayError):
    """The runtime refused the agent's token: the stored token no longer matches the runtime's."""

    default_message = "The agent's gateway refused its token."


class GatewayProtocolError(GatewayError):
    """The runtime speaks another protocol version or sent something that is not one of its frames."""


def scrub(text: object, secrets: Iterable[str | None]) -> str:
    """`text` with every secret replaced, so it may go into an error or a log line."""
    shown = str(text)
    for secret in secrets:
        if secret and len(secret) >= 4:
            shown = shown.replace(secret, REDACTED)
    return shown
