"""A real HTTP server on 127.0.0.1 for tests: webhook receivers and fake third-party APIs.

    def test_it_retries(http_receiver):
        http_receiver.respond_with(500, times=2)   # 500 twice ...
        http_receiver.respond_with(200)            # ... then 200 for ever
        ... point the code under test at http_receiver.url + "/hook" ...
        first, second, third = http_receiver.wait_for(3)

Per-path handlers fake an API: `http_receiver.route("/user", {"id": 1, "login": "octo"})` or
`http_receiver.route("/siteverify", lambda request: Reply(200, {"success": True}), method="POST")`.
`stop()` then `start()` takes the server down and brings it back on the same port.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

HOST = "127.0.0.1"


@dataclass(frozen=True)
class ReceivedRequest:
    method: str
    path: str  # without the query string
    query: dict[str, list[str]]
    headers: dict[str, str]  # keys lower-cased
    body: bytes

    def json(self):
        return json.loads(self.body)

    def header(self, name: str, default: str | None = None) -> str | None:
        return self.headers.get(name.lower(), default)


@dataclass(frozen=True)
class Reply:
    """A scripted response. A dict or list body is sent as JSON."""

    status: int = 200
    body: bytes | str | dict | list | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (to exercise client timeouts)

    def encoded(self) -> tuple[bytes, dict[str, str]]:
        headers = dict(self.headers)
        if isinstance(self.body, (dict, list)):
            headers.setdefault("Content-Type", "application/json")
            return json.dumps(self.body).encode(), headers
        if isinstance(self.body, str):
            headers.setdefault("Content-Type", "text/plain; charset=utf-8")
            return self.body.encode(), headers
        return self.body or b"", headers


Handler = Callable[[ReceivedRequest], "Reply | tuple | int"]


def _as_reply(value) -> Reply:
    if isinstance(value, Reply):
        return value
    if isinstance(value, int):
        return Reply(value)
    if isinstance(value, tuple):
        return Reply(*value)
    return Reply(200, value)


class HttpReceiver:
    """Records every request; answers from per-path routes, then the queue, then the default."""

    def __init__(self) -> None:
        self.port = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._requests: list[ReceivedRequest] = []
        self._arrived = threading.Condition()
        self._queue: deque[Reply] = deque()
        self._default = Reply(200)
        self._routes: dict[tuple[str | None, str], Handler] = {}

    # --- lifecycle ---------------------------------------------------------------------
    def start(self) -> HttpReceiver:
        """Listen (again) on the same port, so "down, then back" keeps the URL valid."""
        if self._server is not None:
            return self
        self._server = _QuietServer((HOST, self.port), _handler_class(self))
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening: new connections are refused until start()."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
        self._server = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def url_for(self, path: str) -> str:
        return self.url + path

    # --- scripting -----------------------------------------------------------------------
    def respond_with(self, status: int = 200, body=None, headers=None, *, times: int | None = None,
                     delay: float = 0.0) -> None:
        """Without `times`, the answer from now on; with it, queue that many answers first."""
        reply = Reply(status, body, headers or {}, delay)
        with self._arrived:
            if times is None:
                self._default = reply
            else:
                self._queue.extend([reply] * times)

    def route(self, path: str, handler: Handler | Reply | dict | list | str | int,
              *, method: str | None = None) -> None:
        """Answer `path` (any method unless given) with a fixed reply or handler(request)."""
        fn = handler if callable(handler) else (lambda _request, value=handler: value)
        with self._arrived:
            self._routes[(method.upper() if method else None, path)] = fn

    # --- inspection ----------------------------------------------------------------------
    @property
    def requests(self) -> list[ReceivedRequest]:
        with self._arrived:
            return list(self._requests)

    def wait_for(self, n: int = 1, timeout: float = 10.0) -> list[ReceivedRequest]:
        """Block until at least `n` requests arrived; fail the test if they do not."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self._requests) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f"expected {n} request(s) at {self.url} within {timeout}s, "
                        f"got {len(self._requests)}"
                    )
                self._arrived.wait(left)
            return list(self._requests)

    def clear(self) -> None:
        with self._arrived:
            self._requests.clear()

    # --- called by the handler thread --------------------------------------------------------
    def _answer(self, request: ReceivedRequest) -> Reply:
        with self._arrived:
            route = self._routes.get((request.method, request.path)) or self._routes.get(
                (None, request.path)
            )
            if route is None:
                reply = self._queue.popleft() if self._queue else self._default
            self._requests.append(request)
            self._arrived.notify_all()
        return _as_reply(route(request)) if route is not None else reply


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        # A client that gave up (its timeout expired) is expected; anything else is a bug.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _handler_class(receiver: HttpReceiver) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        # HTTP/1.0: one request per connection, so stop() leaves no kept-alive socket serving.
        protocol_version = "HTTP/1.0"

        def _handle(self) -> None:
            split = urlsplit(self.path)
            request = ReceivedRequest(
                method=self.command,
                path=split.path,
                query=parse_qs(split.query, keep_blank_values=True),
                headers={k.lower(): v for k, v in self.headers.items()},
                body=self._read_body(),
            )
            reply = receiver._answer(request)
            if reply.delay:
                time.sleep(reply.delay)
            body, headers = reply.encoded()
            self.send_response(reply.status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _read_body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                chunks = []
                while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                self.rfile.readline()
                return b"".join(chunks)
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle

        def log_message(self, format, *args) -> None:  # keep test output quiet
            pass

    return _Handler


@pytest.fixture
def http_receiver():
    receiver = HttpReceiver().start()
    yield receiver
    receiver.stop()


@pytest.fixture
def make_http_receiver():
    """A factory, for tests that need several servers at once (e.g. two fake APIs)."""
    started: list[HttpReceiver] = []

    def make() -> HttpReceiver:
        started.append(HttpReceiver().start())
        return started[-1]

    yield make
    for receiver in started:
        receiver.stop()
