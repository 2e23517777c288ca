"""Django's WSGI handler served from the event loop with one thread hop per request.

Every synchronous view runs, as under a sync worker, in one thread per process
(fleet.edge.django_thread: the process keeps one database connection). The request
body is read on the loop first (spooled to disk past a few MB); the thread runs the whole
request and hands back a plain response in one piece. A response whose body is an async
iterator (Django's StreamingHttpResponse of an async generator: a followed log, a chat turn) is
read on the loop instead, so it waits without holding that thread; a sync streaming body is
read chunk by chunk in the thread.

Why not Django's own ASGIHandler: measured side by side (docs/edge.md), it cost 4 to 5 times the
web CPU of the WSGI path per request (a new thread and database connection for every request
under its per-request context, several hops for middleware and signals), where this costs one
hop, about a tenth of a millisecond.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
from io import BytesIO
from urllib.parse import unquote_to_bytes

from .django_thread import in_django_thread

EDGE_KEY = "fleet.edge"  # in the environ of a request the edge serves: its async bodies are read on the loop
SPOOL_BYTES = 2_621_440  # bodies up to this size stay in memory (Django's FILE_UPLOAD_MAX_MEMORY_SIZE)
_DONE = object()


def _header_key(name: str) -> str:
    if name == "content-type":
        return "CONTENT_TYPE"
    if name == "content-length":
        return "CONTENT_LENGTH"
    return "HTTP_" + name.upper().replace("-", "_")


def environ_of(scope: dict, body, size: int) -> dict:
    """The WSGI environ of an ASGI HTTP scope (PEP 3333: strings hold Latin-1 bytes). The body
    was read whole: its length is what it is, whatever the client said (a chunked upload
    says nothing)."""
    server = scope.get("server") or ("localhost", 80)
    client = scope.get("client") or ("", 0)
    raw_path = scope.get("raw_path")
    path = raw_path.split(b"?", 1)[0] if raw_path else scope["path"].encode()
    root = scope.get("root_path", "")
    environ = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": root,
        "PATH_INFO": _unquote_latin1(path)[len(root):],
        "QUERY_STRING": scope.get("query_string", b"").decode("latin-1"),
        "SERVER_NAME": str(server[0]),
        "SERVER_PORT": str(server[1]) if server[1] is not None else "80",
        "REMOTE_ADDR": client[0] if client else "",
        "SERVER_PROTOCOL": f"HTTP/{scope.get('http_version', '1.1')}",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": body,
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        EDGE_KEY: True,
    }
    for name, value in scope.get("headers") or ():
        key = _header_key(name.decode("latin-1").lower())
        text = value.decode("latin-1")
        if key in environ:
            text = environ[key] + ("; " if key == "HTTP_COOKIE" else ",") + text
        environ[key] = text
    environ["CONTENT_LENGTH"] = str(size)
    return environ


def _unquote_latin1(path: bytes) -> str:
    return unquote_to_bytes(path).decode("latin-1")


async def read_body(receive):
    """(the request body, in memory or spooled to a temporary file, its size); (None, 0) when
    the client left."""
    body = BytesIO()
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None, 0
        chunk = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > SPOOL_BYTES and isinstance(body, BytesIO):
                spooled = tempfile.TemporaryFile()  # noqa: SIM115 - closed by the caller, with the request
                spooled.write(body.getvalue())
                body = spooled
            body.write(chunk)
        if not message.get("more_body"):
            body.seek(0)
            return body, size


class _Response:
    def __init__(self):
        self.status = 500
        self.headers: list[tuple[bytes, bytes]] = []

    def start_response(self, status: str, headers, exc_info=None):
        self.status = int(status.split(" ", 1)[0])
        self.headers = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers]
        return lambda data: None  # the legacy write() callable; Django never uses it


class WsgiBridge:
    """An ASGI application serving a WSGI one (this module's docstring)."""

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        body, size = await read_body(receive)
        if body is None:
            return
        response = _Response()
        try:
            result, first = await in_django_thread(self._run, environ_of(scope, body, size), response)
            await send({"type": "http.response.start", "status": response.status, "headers": response.headers})
            if first is not _DONE:  # a whole body, read in the thread
                await send({"type": "http.response.body", "body": first})
                return
            await self._stream(result, send, receive)
        finally:
            body.close()

    def _run(self, environ: dict, response: _Response):
        """In the thread: the application's answer; a body that is not streamed comes back whole
        (and the response is closed here), a streamed one is left to _stream."""
        result = self.application(environ, response.start_response)
        if getattr(result, "streaming", False):
            return result, _DONE
        try:
            return None, b"".join(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()

    async def _stream(self, result, send, receive) -> None:
        disconnected = asyncio.ensure_future(wait_for_disconnect(receive))
        try:
            if getattr(result, "is_async", False):
                await _send_async_body(result.streaming_content, send, disconnected)
            else:
                chunks = iter(result)
                while (chunk := await in_django_thread(next, chunks, _DONE)) is not _DONE:
                    if disconnected.done():
                        break
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            if not disconnected.done():
                await send({"type": "http.response.body", "body": b""})
        finally:
            disconnected.cancel()
            # Closing releases the stream's lease and ends the request (Django's request_finished
            # and its database clean-up), in the thread that ran it.
            await in_django_thread(result.close)


async def _send_async_body(content, send, disconnected: asyncio.Future) -> None:
    """Send an async body as it comes; stop reading it as soon as the client is gone."""
    iterator = aiter(content)
    try:
        while True:
            step = asyncio.ensure_future(anext(iterator, _DONE))
            await asyncio.wait({step, disconnected}, return_when=asyncio.FIRST_COMPLETED)
            if not step.done():
                step.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await step
                return
            chunk = step.result()
            if chunk is _DONE:
                return
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
    finally:
        close = getattr(iterator, "aclose", None)
        if close is not None:
            with contextlib.suppress(Exception):
                await close()


async def wait_for_disconnect(receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
