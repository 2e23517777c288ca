"""A loopback OpenAI-compatible model server, so real runtimes can run real turns in tests (the
`fake_model` fixture, tests/infra/runtimes.py) and in benchmarks (bench/edge.py): no pytest here.

    def test_a_turn(fake_model):
        ... point a runtime at fake_model.base_url ("http://127.0.0.1:PORT/v1") ...
        fake_model.wait_for(1)                  # the runtime asked the model once
        assert fake_model.requests[-1]["model"] == fake_model.model_id

GET /v1/models lists one model; POST /v1/chat/completions answers `fake_model.answer` with a
fixed `usage` (USAGE), as one JSON body or, when the request says `"stream": true`, as
server-sent events whose last chunk carries the usage. `offer_tool_call(command)` makes the next
request that offers an `exec`-like tool get ONE call of it; the turn after the tool result is a
plain answer again. A fake that returned the same tool call forever would make a runtime loop
(OpenClaw writes thousands of messages a minute). `hold()` keeps answers waiting until
`release()` (or the server stops), to catch a runtime in the middle of a run; `pause_streams()`
makes a streamed answer stop after its first chunk until `finish_streams()`.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOST = "127.0.0.1"
MODEL_ID = "fleet-fake-1"
USAGE = {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
ANSWER = "The fake model answers."
EXEC_TOOL_NAMES = ("exec", "bash", "terminal", "shell", "run_command")
HOLD_LIMIT_SECONDS = 120  # a held answer never outlives a stuck test by much


class FakeModel:
    def __init__(self, model_id: str = MODEL_ID) -> None:
        self.model_id = model_id
        self.answer = ANSWER
        self.port = 0
        self._server: ThreadingHTTPServer | None = None
        self._requests: list[dict] = []
        self._authorizations: list[str] = []  # each chat request's Authorization header, in order
        self._arrived = threading.Condition()
        self._pending_tool_call: str | None = None
        self._tool_calls_made = 0
        self._released = threading.Event()
        self._released.set()
        self._streams_go_on = threading.Event()
        self._streams_go_on.set()

    # --- lifecycle ---------------------------------------------------------------------
    def start(self) -> FakeModel:
        self._server = _Server((HOST, self.port), _handler_class(self))
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        self._released.set()
        self._streams_go_on.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    # --- scripting ---------------------------------------------------------------------
    def offer_tool_call(self, command: str) -> None:
        """Answer the next request that offers an exec-like tool with one call of it."""
        with self._arrived:
            self._pending_tool_call = command

    def hold(self) -> None:
        """Make answers wait (the runtime's run stays active) until release()."""
        self._released.clear()

    def release(self) -> None:
        self._released.set()

    def pause_streams(self) -> None:
        """Streamed answers send their first chunk, then wait until finish_streams()."""
        self._streams_go_on.clear()

    def finish_streams(self) -> None:
        self._streams_go_on.set()

    # --- inspection --------------------------------------------------------------------
    @property
    def requests(self) -> list[dict]:
        with self._arrived:
            return list(self._requests)

    @property
    def authorizations(self) -> list[str]:
        """The Authorization header of each chat request (the key a runtime sent), in order."""
        with self._arrived:
            return list(self._authorizations)

    @property
    def tool_calls_made(self) -> int:
        return self._tool_calls_made

    def wait_for(self, n: int = 1, timeout: float = 30.0) -> list[dict]:
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self._requests) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"expected {n} model request(s) within {timeout}s, got {len(self._requests)}")
                self._arrived.wait(left)
            return list(self._requests)

    def clear(self) -> None:
        with self._arrived:
            self._requests.clear()
            self._authorizations.clear()

    # --- called by the handler threads -------------------------------------------------------
    def _reply_for(self, body: dict, authorization: str = "") -> dict:
        """The assistant message for a request: one pending tool call, else the answer."""
        with self._arrived:
            self._requests.append(body)
            self._authorizations.append(authorization)
            self._arrived.notify_all()
            tool = _exec_tool(body.get("tools") or [])
            last_role = (body.get("messages") or [{}])[-1].get("role")
            if self._pending_tool_call and tool and last_role != "tool":
                command, self._pending_tool_call = self._pending_tool_call, None
                self._tool_calls_made += 1
                return {"role": "assistant", "content": None, "tool_calls": [{
                    "id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
                    "function": {"name": tool, "arguments": json.dumps({"command": command})},
                }]}
        return {"role": "assistant", "content": self.answer}

    def _wait_released(self) -> None:
        self._released.wait(HOLD_LIMIT_SECONDS)


def _exec_tool(tools: list[dict]) -> str | None:
    names = [(t.get("function") or {}).get("name", "") for t in tools]
    return next((n for n in names if n in EXEC_TOOL_NAMES), None)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def get_request(self):
        # Headers and body are two writes: without TCP_NODELAY the body of a kept-alive
        # connection's answer waits on the client's delayed ACK (40 ms), as no real provider's does.
        connection, address = super().get_request()
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection, address

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a runtime that aborted a run
            super().handle_error(request, client_address)


def _handler_class(model: FakeModel) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._json(200, {"object": "list", "data": [
                    {"id": model.model_id, "object": "model", "created": 0, "owned_by": "fleet-tests"}
                ]})
            else:
                self._json(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._json(404, {"error": {"message": "not found"}})
                return
            message = model._reply_for(body, self.headers.get("Authorization", ""))
            model._wait_released()
            if body.get("stream"):
                self._stream(message)
            else:
                self._json(200, _completion(model.model_id, message))

        def _json(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, message: dict) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for index, chunk in enumerate(_chunks(model.model_id, message)):
                if index == 1:
                    model._streams_go_on.wait(HOLD_LIMIT_SECONDS)
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

        def log_message(self, format, *args) -> None:
            pass

    return _Handler


def _completion(model_id: str, message: dict) -> dict:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:16]}", "object": "chat.completion", "created": int(time.time()),
        "model": model_id, "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": dict(USAGE),
    }


def _chunks(model_id: str, message: dict) -> list[dict]:
    base = {"id": f"chatcmpl-{uuid.uuid4().hex[:16]}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": model_id}
    if message.get("tool_calls"):
        calls = [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]
        delta, finish = {"role": "assistant", "content": None, "tool_calls": calls}, "tool_calls"
    else:
        delta, finish = {"role": "assistant", "content": message["content"]}, "stop"
    return [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
        {**base, "choices": [], "usage": dict(USAGE)},
    ]
