"""The wire formats the gateway speaks: its routes, their errors in each provider's shape, and
the usage figures read from a provider's answer (whole, or streamed as server-sent events).

OpenAI: `usage.prompt_tokens` / `completion_tokens` (chat completions; a stream carries them in
its last chunk when asked with `stream_options.include_usage`), `usage.input_tokens` /
`output_tokens` (responses; a stream in its `response.completed` event). Anthropic:
`usage.input_tokens` (plus the cache's `cache_creation_input_tokens` and
`cache_read_input_tokens`) and `output_tokens`; a stream says the input in `message_start` and
the output so far in each `message_delta`.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

OPENAI = "openai"
ANTHROPIC = "anthropic"


@dataclass(frozen=True)
class Route:
    path: str  # under /llm/v1
    method: str
    wire: str  # the format callers speak: OPENAI or ANTHROPIC
    upstream: str  # the provider's path under its base URL (OpenAI-compatible base for OPENAI)
    kinds: tuple[str, ...]  # the provider kinds (llm.providers) that serve it
    output_limit: tuple[str, ...] = ()  # body fields bounding the output; the first is set when none is

    @property
    def carries_a_call(self) -> bool:
        return self.method == "POST"


ROUTES = {
    ("POST", "/chat/completions"): Route("/chat/completions", "POST", OPENAI, "/chat/completions",
                                         ("openai", "anthropic", "google"), ("max_tokens", "max_completion_tokens")),
    ("POST", "/responses"): Route("/responses", "POST", OPENAI, "/responses", ("openai",), ("max_output_tokens",)),
    ("POST", "/messages"): Route("/messages", "POST", ANTHROPIC, "/messages", ("anthropic",), ("max_tokens",)),
    ("GET", "/models"): Route("/models", "GET", OPENAI, "/models", ("openai", "anthropic", "google")),
}

# The error `type` each wire format gives an HTTP status.
_OPENAI_TYPES = {400: "invalid_request_error", 401: "authentication_error", 402: "insufficient_quota",
                 403: "permission_error", 404: "not_found_error", 409: "invalid_request_error",
                 413: "invalid_request_error", 429: "rate_limit_error"}
_ANTHROPIC_TYPES = {400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
                    403: "permission_error", 404: "not_found_error", 409: "invalid_request_error",
                    413: "request_too_large", 429: "rate_limit_error"}


def error_body(wire: str, status: int, code: str, message: str) -> dict:
    """An error as the wire format's clients parse it, with Fleet's `code` in it."""
    if wire == ANTHROPIC:
        kind = _ANTHROPIC_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "code": code, "message": message}}
    kind = _OPENAI_TYPES.get(status, "api_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


@dataclass
class Usage:
    input_tokens: int
    output_tokens: int


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


class UsageMeter:
    """Reads the provider's usage figures from its answer as it passes through, chunk by chunk.
    Bodies it cannot read (not JSON, cut off) leave it without figures: `usage` is then None."""

    MAX_WHOLE_BODY = 32 * 1024 * 1024  # a whole (not streamed) answer larger than this is not parsed

    def __init__(self, *, streamed: bool):
        self.streamed = streamed
        self._buffer = bytearray()
        self._input: int | None = None
        self._output: int | None = None
        self._too_large = False

    def feed(self, chunk: bytes) -> None:
        if not self.streamed:
            if len(self._buffer) + len(chunk) > self.MAX_WHOLE_BODY:
                self._too_large = True
                self._buffer.clear()
            elif not self._too_large:
                self._buffer += chunk
            return
        self._buffer += chunk
        while True:
            end = self._buffer.find(b"\n")
            if end < 0:
                return
            line = bytes(self._buffer[:end]).rstrip(b"\r")
            del self._buffer[:end + 1]
            if line.startswith(b"data:"):
                self._read_event(line[5:].strip())

    def _read_event(self, data: bytes) -> None:
        if not data or data == b"[DONE]":
            return
        try:
            self._take(orjson.loads(data))
        except orjson.JSONDecodeError:
            pass

    def _take(self, payload) -> None:
        if not isinstance(payload, dict):
            return
        for holder in (payload, payload.get("response"), payload.get("message")):
            usage = holder.get("usage") if isinstance(holder, dict) else None
            if isinstance(usage, dict):
                self._take_usage(usage)

    def _take_usage(self, usage: dict) -> None:
        prompt = _count(usage.get("prompt_tokens"))
        given = _count(usage.get("input_tokens"))
        if prompt is not None or given is not None:
            cached = sum(_count(usage.get(name)) or 0
                         for name in ("cache_creation_input_tokens", "cache_read_input_tokens"))
            self._input = (prompt if prompt is not None else given) + (cached if prompt is None else 0)
        output = _count(usage.get("completion_tokens"))
        if output is None:
            output = _count(usage.get("output_tokens"))
        if output is not None:
            # Anthropic's message_delta counts the output so far: the last figure is the total.
            self._output = output

    @property
    def usage(self) -> Usage | None:
        if not self.streamed and self._buffer and not self._too_large:
            try:
                self._take(orjson.loads(bytes(self._buffer)))
            except orjson.JSONDecodeError:
                pass
            self._buffer.clear()
        if self._input is None and self._output is None:
            return None
        return Usage(self._input or 0, self._output or 0)
