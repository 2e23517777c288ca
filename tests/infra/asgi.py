"""Fleet's ASGI application (fleet.asgi, what the Procfile's web process serves) called in the
test's process, as an ASGI server calls it: HTTP requests read whole or chunk by chunk, a
client that leaves, and WebSocket sessions.

    response = edge_request("GET", "/api/health")
    with edge_stream("GET", f"/api/agents/{id}/logs", headers={...}) as stream:
        first = stream.next_chunk(timeout=5)
    with edge_socket(f"/api/agents/{id}/terminal", headers={...}) as socket:
        socket.send_bytes(b"id -u\n")

The application runs on an event loop in a thread of its own (one per test), and its Django
thread opens its own database connection: tests that use these ask for `transactional_db`, so
what they create is committed and seen.
"""

from __future__ import annotations

import asyncio
import json
import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.db import connections

from fleet.edge.django_thread import in_django_thread
from fleet.edge.routes import shutdown

HOST = "testserver"


def _scope(kind: str, method: str, path: str, headers: dict[str, str] | None) -> dict:
    target, _, query = path.partition("?")
    sent = {"host": HOST, **{name.lower(): value for name, value in (headers or {}).items()}}
    scope = {
        "type": kind, "asgi": {"version": "3.0"}, "http_version": "1.1", "scheme": "http" if kind == "http" else "ws",
        "path": target, "raw_path": target.encode(), "query_string": query.encode(), "root_path": "",
        "headers": [(name.encode("latin-1"), value.encode("latin-1")) for name, value in sent.items()],
        "client": ("127.0.0.1", 40000), "server": ("127.0.0.1", 8000),
    }
    if kind == "http":
        scope["method"] = method
    return scope


async def _close_django_connections() -> None:
    await in_django_thread(connections.close_all)


class _LoopThread:
    """An event loop running in a thread of its own for the length of one with-block."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True, name="test-edge-loop")

    def __enter__(self):
        self.thread.start()
        return self

    def run(self, coroutine, timeout: float = 30):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def __exit__(self, *exc_info):
        # The apps' hooks on this loop first, as the server's lifespan runs them (a hook may still
        # write: the model gateway settles what it holds); then the Django thread's connection to
        # the test database is closed, so nothing holds it when the database is flushed or dropped.
        self.run(shutdown())
        self.run(_close_django_connections())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)
        self.loop.close()


@dataclass
class EdgeResponse:
    status: int
    headers: dict[str, str]
    body: bytes = b""

    def json(self):
        return json.loads(self.body)


@dataclass
class EdgeStream:
    """A response read as it comes; `leave()` is the client closing its connection."""

    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    chunks: queue.Queue = field(default_factory=queue.Queue)
    _disconnect: asyncio.Event | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    ended: threading.Event = field(default_factory=threading.Event)

    def next_chunk(self, timeout: float = 10) -> bytes:
        return self.chunks.get(timeout=timeout)

    def read_until(self, marker: bytes, timeout: float = 10) -> bytes:
        """Everything up to and including the chunk holding `marker`."""
        seen = b""
        while marker not in seen:
            seen += self.next_chunk(timeout)
        return seen

    def leave(self) -> None:
        self._loop.call_soon_threadsafe(self._disconnect.set)


def _app():
    from fleet.asgi import application

    return application


def edge_request(method: str, path: str, *, headers: dict[str, str] | None = None, body: bytes = b"",
                 timeout: float = 30) -> EdgeResponse:
    """One request through the ASGI application, its whole answer."""
    with edge_stream(method, path, headers=headers, body=body) as stream:
        stream.ended.wait(timeout)
        chunks = []
        while not stream.chunks.empty():
            chunks.append(stream.chunks.get())
        return EdgeResponse(stream.status, stream.headers, b"".join(chunks))


@contextmanager
def edge_stream(method: str, path: str, *, headers: dict[str, str] | None = None,
                body: bytes = b"") -> Iterator[EdgeStream]:
    stream = EdgeStream()
    started = threading.Event()
    with _LoopThread() as runner:
        async def serve():
            stream._loop = asyncio.get_running_loop()
            stream._disconnect = asyncio.Event()
            sent_body = False

            async def receive():
                nonlocal sent_body
                if not sent_body:
                    sent_body = True
                    return {"type": "http.request", "body": body, "more_body": False}
                await stream._disconnect.wait()
                return {"type": "http.disconnect"}

            async def send(message):
                if message["type"] == "http.response.start":
                    stream.status = message["status"]
                    stream.headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in message["headers"]}
                    started.set()
                elif message.get("body"):
                    stream.chunks.put(message["body"])

            try:
                await _app()(_scope("http", method, path, headers), receive, send)
            finally:
                started.set()
                stream.ended.set()

        future = asyncio.run_coroutine_threadsafe(serve(), runner.loop)
        started.wait(30)
        try:
            yield stream
        finally:
            if not stream.ended.is_set():
                stream.leave()
            future.result(timeout=15)


@dataclass
class EdgeSocket:
    """One WebSocket session: `accepted` (or `close_code` when it was refused: the close code,
    or the HTTP status of a denial response), frames sent and received."""

    accepted: bool = False
    close_code: int | None = None
    close_reason: str = ""
    denial_body: bytes = b""  # the body of a refusal answered with HTTP (websocket.http.response)
    received: queue.Queue = field(default_factory=queue.Queue)
    _incoming: asyncio.Queue | None = None
    _loop: asyncio.AbstractEventLoop | None = None
    closed: threading.Event = field(default_factory=threading.Event)

    def _put(self, message: dict) -> None:
        self._loop.call_soon_threadsafe(self._incoming.put_nowait, message)

    def send_bytes(self, data: bytes) -> None:
        self._put({"type": "websocket.receive", "bytes": data})

    def send_text(self, text: str) -> None:
        self._put({"type": "websocket.receive", "text": text})

    def receive(self, timeout: float = 10) -> bytes | str:
        return self.received.get(timeout=timeout)

    def receive_until(self, marker: bytes, timeout: float = 10) -> bytes:
        seen = b""
        while marker not in seen:
            frame = self.receive(timeout)
            seen += frame if isinstance(frame, bytes) else frame.encode()
        return seen

    def close(self, code: int = 1000) -> None:
        self._put({"type": "websocket.disconnect", "code": code})


@contextmanager
def edge_socket(path: str, *, headers: dict[str, str] | None = None, timeout: float = 15,
                extensions: dict | None = None) -> Iterator[EdgeSocket]:
    """A WebSocket session with the application; `extensions` are the ASGI extensions the
    server says it offers (`{"websocket.http.response": {}}`: refusals may answer with HTTP)."""
    socket = EdgeSocket()
    decided = threading.Event()
    with _LoopThread() as runner:
        async def serve():
            socket._loop = asyncio.get_running_loop()
            socket._incoming = asyncio.Queue()
            socket._incoming.put_nowait({"type": "websocket.connect"})

            async def send(message):
                kind = message["type"]
                if kind == "websocket.accept":
                    socket.accepted = True
                    decided.set()
                elif kind == "websocket.send":
                    socket.received.put(message.get("bytes") if message.get("bytes") is not None else message["text"])
                elif kind == "websocket.close":
                    socket.close_code = message.get("code", 1000)
                    socket.close_reason = message.get("reason") or ""
                    socket.closed.set()
                    decided.set()
                elif kind == "websocket.http.response.start":  # a refusal with an HTTP answer
                    socket.close_code = message["status"]
                elif kind == "websocket.http.response.body":
                    socket.denial_body += message.get("body", b"")
                    if not message.get("more_body"):
                        socket.closed.set()
                        decided.set()

            try:
                scope = _scope("websocket", "GET", path, headers)
                if extensions is not None:
                    scope["extensions"] = extensions
                await _app()(scope, socket._incoming.get, send)
            finally:
                socket.closed.set()
                decided.set()

        future = asyncio.run_coroutine_threadsafe(serve(), runner.loop)
        decided.wait(timeout)
        try:
            yield socket
        finally:
            if not socket.closed.is_set():
                socket.close()
            future.result(timeout=15)
