"""The logs operation of the Docker backend (DockerBackend mixes this in): WorkloadLogs.

The engine's logs endpoint with timestamps, read frame by frame: a container without a TTY
multiplexes stdout and stderr in 8-byte-headed frames (byte 0 says which stream), one with a
TTY sends one stream (stdout). docker-py's own reader drops the stream byte, so the frames
are read here.

A blocking follow (`logs(follow=True)`) waits on the engine's socket in a thread, so its
iterator is an object whose `close()` shuts that socket down from any thread. `follow_logs`
reads the same frames on the event loop instead (agents.backends.docker_async), without a
thread, wherever the engine is reached by a socket it speaks.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import suppress
from datetime import UTC, datetime

from agents.backends import docker_stats
from agents.backends.base import LogLine
from agents.backends.docker_async import engine_session, speaks_natively
from agents.backends.docker_engine import engine_client, engine_errors
from agents.backends.follow import follow_in_thread

logger = logging.getLogger(__name__)

HEADER_SIZE = 8
STREAMS = {1: "stdout", 2: "stderr"}
MAX_LINE = 16 * 1024  # the engine splits longer lines into partial messages; so do we


def _since_param(since: datetime) -> str:
    # The engine reads "<seconds>.<nanoseconds>"; docker-py would round to whole seconds.
    return f"{since.timestamp():.6f}"


def parse_log_line(stream: str, text: str) -> LogLine:
    """`<RFC 3339 nano timestamp> <line>` as the engine writes it with timestamps=1."""
    stamp, _, line = text.partition(" ")
    ts = docker_stats.parse_docker_time(stamp)
    if ts is None:  # not a timestamp after all: keep the whole text, stamped now
        return LogLine(ts=datetime.now(UTC), stream=stream, line=text[:MAX_LINE])
    return LogLine(ts=ts, stream=stream, line=line[:MAX_LINE])


class LineSplitter:
    """The engine's frames (pieces of each stream's text) turned into whole lines, kept only
    from `since` on (the engine's `since` is inclusive to the second on older engines)."""

    def __init__(self, since: datetime | None):
        self._since = since
        self._pending: dict[str, str] = {}  # a stream's text after its last newline

    def feed(self, stream: str, data: bytes) -> list[LogLine]:
        text = self._pending.pop(stream, "") + data.decode("utf-8", errors="replace")
        *whole, rest = text.split("\n")
        if rest:
            self._pending[stream] = rest
        return self._kept(parse_log_line(stream, piece.rstrip("\r")) for piece in whole)

    def flush(self) -> list[LogLine]:
        """The text after each stream's last newline, once the answer ended."""
        lines = self._kept(parse_log_line(stream, rest) for stream, rest in self._pending.items())
        self._pending.clear()
        return lines

    def _kept(self, lines) -> list[LogLine]:
        return [line for line in lines if self._since is None or line.ts >= self._since]


class DockerLogStream:
    """An iterator of LogLines over one logs response; `close()` may come from any thread."""

    def __init__(self, response, sock, *, tty: bool, since: datetime | None):
        self._response = response
        self._sock = sock
        self._tty = tty
        self._lines = LineSplitter(since)
        self._ready: list[LogLine] = []
        self._closed = threading.Event()

    def __iter__(self):
        return self

    def __next__(self) -> LogLine:
        while not self._ready:
            if self._closed.is_set():
                raise StopIteration
            frame = self._read_frame()
            if frame is None:
                self._ready.extend(self._lines.flush())
                # The answer ended: urllib3 has put its connection back in the pool, where the
                # next request of this engine takes it. Shutting it down here would hand that
                # request a dead connection (one urllib3 cannot tell is dead over SSH channels).
                self._closed.set()
                if not self._ready:
                    raise StopIteration
                break
            self._ready.extend(self._lines.feed(*frame))
        return self._ready.pop(0)

    def _read_frame(self) -> tuple[str, bytes] | None:
        raw = self._response.raw
        try:
            if self._tty:
                data = raw.read1(65536) if hasattr(raw, "read1") else raw.read(4096)
                return ("stdout", data) if data else None
            header = raw.read(HEADER_SIZE)
            if len(header) < HEADER_SIZE:
                return None
            kind, length = struct.unpack(">BxxxL", header)
            data = raw.read(length) if length else b""
            if length and not data:
                return None
            return STREAMS.get(kind, "stdout"), data
        except (OSError, ValueError, AttributeError):
            self.close()  # the socket was shut down by close(), or the engine went away
            return None

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        # Shut the socket itself (under docker-py's SocketIO) down: that wakes a reader blocked
        # in another thread. Closing the response first would wait for that reader's lock.
        raw = getattr(self._sock, "_sock", self._sock)
        with suppress(OSError, AttributeError):
            raw.shutdown(socket.SHUT_RDWR)
        with suppress(Exception):
            self._response.close()


def _logs_params(tail: int | None, since: datetime | None, *, follow: bool) -> dict:
    params = {"stdout": 1, "stderr": 1, "timestamps": 1, "follow": int(follow),
              "tail": "all" if tail is None else str(int(tail))}
    if since is not None:
        params["since"] = _since_param(since)
    return params


async def engine_log_lines(host: str, container_id: str, *, tty: bool, params: dict,
                           since: datetime | None) -> AsyncIterator[LogLine]:
    """The engine's logs answer read frame by frame on the event loop. An engine that refuses
    or goes away ends the lines (the caller checked the container just before)."""
    lines = LineSplitter(since)
    try:
        async with engine_session(host) as (base, session), \
                session.get(f"{base}/containers/{container_id}/logs", params=params) as response:
            if response.status != 200:
                return
            body = response.content
            while True:
                if tty:
                    data = await body.readany()
                    if not data:
                        break
                    frame = ("stdout", data)
                else:
                    try:
                        kind, length = struct.unpack(">BxxxL", await body.readexactly(HEADER_SIZE))
                        frame = (STREAMS.get(kind, "stdout"), await body.readexactly(length) if length else b"")
                    except asyncio.IncompleteReadError:
                        break
                for line in lines.feed(*frame):
                    yield line
    except OSError as exc:  # aiohttp's connection errors are OSErrors
        logger.info("Following a container's log on %s ended: %s", host, exc)
    for line in lines.flush():
        yield line


class DockerLogs:
    """Mixed into DockerBackend, which provides `host`, `_require` and the client."""

    def logs(self, agent, *, tail: int | None = 200, since: datetime | None = None,
             follow: bool = False) -> Iterator[LogLine]:

        client = engine_client(self.host)
        with engine_errors(self.host):
            container = self._require(agent)
            tty = bool((container.attrs.get("Config") or {}).get("Tty"))
            params = _logs_params(tail, since, follow=follow)
            api = client.api
            response = api._get(api._url("/containers/{0}/logs", container.id), params=params, stream=True)
            sock = api._get_raw_response_socket(response)  # raises the engine's refusal
            if follow:
                api._disable_socket_timeout(sock)  # a quiet workload is not a dead engine
        return DockerLogStream(response, sock, tty=tty, since=since)

    def follow_logs(self, agent, *, tail: int | None = 200, since: datetime | None = None) -> AsyncIterator[LogLine]:
        """WorkloadLogs.follow_logs: the container is looked up now (its refusals are answers),
        its lines are read when iterated, on the event loop."""
        if not speaks_natively(self.host):
            return follow_in_thread(self.logs(agent, tail=tail, since=since, follow=True))

        with engine_errors(self.host):
            container = self._require(agent)
        tty = bool((container.attrs.get("Config") or {}).get("Tty"))
        return engine_log_lines(self.host, container.id, tty=tty, params=_logs_params(tail, since, follow=True),
                                since=since)
