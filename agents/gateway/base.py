"""The one interface every runtime family implements, and the shapes its answers take.

Callers see these types only, never a family's frames: `RuntimeGateway` is what
`gateway_for(agent)` returns. An operation a family lacks raises GatewayUnsupported (409).
Results that every family can give the same way are dataclasses; the runtime's own documents
(its config, its exec policy) are returned as the dicts the runtime owns.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import date
from typing import NoReturn

from .errors import GatewayUnsupported


@dataclass(frozen=True)
class Handshake:
    family: str
    version: str  # the runtime's own version, e.g. "2026.9.6"
    protocol: int | None = None  # the wire protocol spoken (OpenClaw: 4)
    scopes: tuple[str, ...] = ()  # what the runtime granted this connection


@dataclass(frozen=True)
class Readiness:
    ready: bool
    failing: tuple[str, ...] = ()  # names of the runtime's checks that do not pass
    detail: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ChannelState:
    channel: str
    configured: bool
    running: bool
    connected: bool
    linked: bool | None = None
    error: str = ""
    issues: tuple[dict, ...] = ()  # the runtime's statusIssues of this channel: {kind, message, fix}


@dataclass(frozen=True)
class UsageRow:
    """Cumulative token use of one (UTC day, provider, model) as the runtime counts it."""

    day: date
    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None  # None: the runtime did not price it
    calls: int = 0


@dataclass(frozen=True)
class Usage:
    rows: tuple[UsageRow, ...]
    complete: bool = True  # False when the runtime said its figures were still being computed


@dataclass(frozen=True)
class ChatReply:
    text: str
    conversation: str  # the runtime's session the turn ran in
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True)
class Approval:
    id: str
    command: str
    decisions: tuple[str, ...]  # what the runtime allows as an answer
    detail: dict = field(default_factory=dict)


def as_json(value):
    """A result made printable as JSON (dataclasses, dates, tuples)."""
    if hasattr(value, "__dataclass_fields__"):
        return as_json(asdict(value))
    if isinstance(value, dict):
        return {str(k): as_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_json(v) for v in value]
    if isinstance(value, date):
        return value.isoformat()
    return value


class RuntimeGateway(ABC):
    """One running runtime, reached through its gateway. Every call has a timeout."""

    family: str

    def _unsupported(self, operation: str) -> NoReturn:
        raise GatewayUnsupported(f"The {self.family} runtime does not support {operation}.")

    # -- reachability --------------------------------------------------------------------
    @abstractmethod
    def handshake(self) -> Handshake:
        """Authenticate and return the runtime's version (GatewayAuthRefused for a bad token)."""

    @abstractmethod
    def health(self) -> dict:
        """Liveness: the runtime's answer to its health route; raises when it does not answer."""

    @abstractmethod
    def ready(self) -> Readiness:
        """Readiness: ready=False while the runtime starts, drains or fails a check."""

    # -- channels ------------------------------------------------------------------------
    def channels_status(self) -> list[ChannelState]:
        self._unsupported("channel status")

    def login_start(self, channel: str, *, account_id: str | None = None, force: bool = False,
                    timeout_ms: int | None = None) -> dict:
        self._unsupported("QR login")

    def login_wait(self, channel: str, *, timeout_ms: int | None = None, current_qr: str | None = None,
                   account_id: str | None = None) -> dict:
        self._unsupported("QR login")

    def logout(self, channel: str, *, account_id: str | None = None) -> dict:
        self._unsupported("channel logout")

    # -- configuration -------------------------------------------------------------------
    def config_get(self) -> dict:
        self._unsupported("reading its configuration")

    def config_patch(self, patch: dict, base_hash: str | None = None, *,
                     replace_paths: Sequence[str] = ()) -> dict:
        self._unsupported("changing its configuration")

    # -- runs and usage ------------------------------------------------------------------
    @abstractmethod
    def usage(self, since: date) -> Usage:
        """Token use per (day, provider, model) from `since` (UTC) on."""

    def abort_runs(self) -> list[str]:
        self._unsupported("aborting runs")

    def send_message(self, text: str, *, conversation: str, timeout: float | None = None) -> ChatReply:
        self._unsupported("chat turns")

    # -- sandbox policy and approvals ----------------------------------------------------------
    def exec_policy_get(self) -> dict:
        self._unsupported("exec policies")

    def exec_policy_set(self, file: dict, base_hash: str) -> dict:
        self._unsupported("exec policies")

    def approvals_list(self) -> list[Approval]:
        self._unsupported("listing approvals")

    def approval_resolve(self, approval_id: str, decision: str) -> dict:
        self._unsupported("approvals")
