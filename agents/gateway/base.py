"""The one interface every runtime family implements, and the shapes its answers take.

Callers see these types only, never a family's frames: `RuntimeGateway` is what
`gateway_for(agent)` returns. An operation a family lacks raises GatewayUnsupported (409).
Results that every family can give the same way are dataclasses; the runtime's own documents
(its config, its exec policy) are returned as the dicts the runtime owns.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from typing import NoReturn

from .errors import GatewayUnsupported
from .ui_relay import UiRelay


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
class ChatUsage:
    """What one chat turn cost, as the runtime counted it (provider and model as it names them)."""

    model: str
    provider: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None = None  # None: the runtime did not price it
    # When the runtime's own usage report files this turn (Hermes files a whole conversation
    # under the moment it started); None: now.
    counted_at: datetime | None = None


@dataclass(frozen=True)
class ChatEvent:
    """One step of a chat turn, the same for every family. `kind` and its `data`:
    delta {text}, tool {name, status}, approval {id, command}, error {code, message},
    done {sessionId} (with `usage` when the runtime reported it)."""

    kind: str
    data: dict
    usage: ChatUsage | None = None
    run_id: str = ""  # the runtime's id of the turn (usage is recorded once per run)


def chat_delta(text: str) -> ChatEvent:
    return ChatEvent("delta", {"text": text})


def chat_tool(name: str, status: str) -> ChatEvent:
    return ChatEvent("tool", {"name": name, "status": status})


def chat_approval(approval_id: str, command: str) -> ChatEvent:
    return ChatEvent("approval", {"id": approval_id, "command": command})


def chat_error(code: str, message: str) -> ChatEvent:
    return ChatEvent("error", {"code": code, "message": message})


def chat_done(session_id: str, usage: ChatUsage | None, run_id: str) -> ChatEvent:
    return ChatEvent("done", {"sessionId": session_id}, usage=usage, run_id=run_id)


def message_text(content) -> str:
    """A transcript message's text: a string, or a list of parts (OpenAI's and OpenClaw's shape)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text") or "") for part in content if isinstance(part, dict))
    return ""


@dataclass(frozen=True)
class ChatSession:
    id: str
    title: str
    updated_at: str | None  # ISO 8601, as the runtime last touched it
    message_count: int | None = None


@dataclass(frozen=True)
class ChatMessage:
    role: str  # user | assistant | tool | system
    text: str
    at: str | None = None  # ISO 8601


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

    # -- the runtime's own UI, through the gateway proxy ----------------------------------------
    def ui_relay(self) -> UiRelay:
        """What the proxy does to the UI's WebSocket frames (nothing, unless a family says)."""
        return UiRelay()

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

    # How ready() asks over HTTP, for a caller that asks many runtimes from the event loop
    # (agents.gateway.readiness_async): GET this family's ready_path, with or without the
    # token, these statuses answered as well as a 2xx, the body read by readiness_of().
    ready_authenticated: bool = False
    ready_ok_statuses: tuple[int, ...] = ()

    @staticmethod
    def readiness_of(status: int, body: dict) -> Readiness:
        raise NotImplementedError

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

    # -- chat (the door's chat panel and POST /agents/:id/chat) ---------------------------------
    def chat(self, message: str, *, session_id: str | None) -> AsyncIterator[ChatEvent]:
        """One turn, streamed: its ChatEvents as they happen, ending with `done` (or `error`).
        Waits on the event loop; the runtime is reached when the iterator is first read."""
        self._unsupported("chat")

    def chat_sessions(self) -> list[ChatSession]:
        """The runtime's conversations, most recently active first."""
        self._unsupported("chat history")

    def chat_messages(self, session_id: str) -> list[ChatMessage]:
        """One conversation's messages, oldest first; GatewayError when it does not exist."""
        self._unsupported("chat history")

    # -- sandbox policy and approvals ----------------------------------------------------------
    def exec_policy_get(self) -> dict:
        self._unsupported("exec policies")

    def exec_policy_set(self, file: dict, base_hash: str) -> dict:
        self._unsupported("exec policies")

    def approvals_list(self) -> list[Approval]:
        self._unsupported("listing approvals")

    def approval_resolve(self, approval_id: str, decision: str) -> dict:
        self._unsupported("approvals")
