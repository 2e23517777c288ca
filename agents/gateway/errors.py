"""What a gateway call can fail with, as fleet.errors families (the API maps them once).

Messages are for people and never carry a secret: every text that came from a runtime or a
transport goes through `scrub()` with the secrets of the call before it lands in an error.
What a runtime says about a refusal goes through `runtime_text()`: only its own message (the
`error` string or `error.message` of a JSON answer, never a raw body such as an HTML page), in a
short form (one line, printable, at most RUNTIME_TEXT_MAX characters) with the call's secrets and
anything shaped like a credential (long runs of key-like characters, `token=...`) replaced. These
messages reach `last_error`, events and API answers that viewers read; a runtime is not trusted
to keep its secrets (or anyone's) out of what it answers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fleet.errors import Conflict, UpstreamFailure

REDACTED = "[redacted]"
RUNTIME_TEXT_MAX = 120
# Runs of characters keys and tokens are made of, long enough to be one (sk-..., JWTs, hex).
_KEY_LIKE = re.compile(r"[A-Za-z0-9+/_=.~-]{24,}")
# `token=...`, `Bearer ...`, `"password": "..."`: the value after a word that names a secret.
_NAMED_SECRET = re.compile(
    r"(?i)\b(bearer|token|api[_-]?key|secret|password|passwd|authorization)\b([\"']?\s*[:=]?\s*[\"']?)\S+"
)
_CODE = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


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


class GatewayDropped(GatewayUnreachable):
    """The connection was refused, broken off or not answered: the runtime may be restarting
    (never a refusal of Fleet's own, such as an address it may not use)."""


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


def runtime_not_ready(exc: BaseException) -> bool:
    """The runtime cannot take the call now but may soon: it is unreachable (down, restarting)
    or said "not now" (starting, draining). Work in the background retries these; every other
    refusal is final, and an agent that is not running is the caller's own case."""
    return isinstance(exc, GatewayUnreachable) or (isinstance(exc, GatewayError) and exc.retryable)


def scrub(text: object, secrets: Iterable[str | None]) -> str:
    """`text` with every secret replaced, so it may go into an error or a log line."""
    shown = str(text)
    for secret in secrets:
        if secret and len(secret) >= 4:
            shown = shown.replace(secret, REDACTED)
    return shown


def runtime_text(text: object, secrets: Iterable[str | None]) -> str:
    """The short, scrubbed form of a runtime's own words for an error message (module
    docstring); "" when nothing printable is left."""
    if not isinstance(text, str):
        return ""
    line = next((part for part in text.splitlines() if part.strip()), "")
    line = "".join(c if c.isprintable() else " " for c in line)
    line = " ".join(scrub(line, secrets).split())
    line = _NAMED_SECRET.sub(lambda match: f"{match.group(1)}{match.group(2)}{REDACTED}", line)
    line = _KEY_LIKE.sub(REDACTED, line)
    return line if len(line) <= RUNTIME_TEXT_MAX else line[: RUNTIME_TEXT_MAX - 1].rstrip() + "…"


def runtime_code(value: object) -> str:
    """A runtime's error code when it looks like one (letters, digits, `_.:-`, at most 64), else ""."""
    code = str(value) if isinstance(value, (str, int)) else ""
    return code if _CODE.match(code) else ""
