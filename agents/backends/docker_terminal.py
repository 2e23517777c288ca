"""The Docker backend's terminal on an engine reached by a socket, spoken to on the event loop
with no thread held: the engine's exec API with a TTY.

    POST /containers/{id}/exec   {Cmd, Tty, AttachStdin...}   -> the exec's id
    POST /exec/{id}/start        hijacked (`Connection: Upgrade`, `Upgrade: tcp`): the engine
                                 answers 101 and the connection carries the TTY's bytes both ways
    POST /exec/{id}/resize?h=&w=

aiohttp hands over no upgraded connection but a WebSocket's, so the start is one request written
here on an asyncio connection of its own; the JSON calls go through one aiohttp session per
terminal (agents.backends.docker_async). Over Remote Docker's SSH channels the Docker backend
uses docker-py in a thread instead (DockerBackend.attach_exec).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
from urllib.parse import urlsplit

import aiohttp
import orjson

from .base import LABEL_AGENT_ID, BackendError, BackendUnreachable, WorkloadMissing, WorkloadNotRunning
from .docker_async import CONNECT_TIMEOUT, engine_session
from .terminal import READ_SIZE, ThreadedExecSession, blocking_chunks, hangup_argv, new_marker, shell_argv

logger = logging.getLogger(__name__)

HEAD_LIMIT = 16384  # what is read of a refused start's body


def _refusal(status: int, body: bytes, what: str) -> BackendError:
    try:
        message = orjson.loads(body).get("message") or ""
    except (orjson.JSONDecodeError, AttributeError):
        message = body[:200].decode(errors="replace")
    if status == 404:
        return WorkloadMissing(f"The container no longer exists: {message}")
    if status == 409:  # not running, paused, restarting
        return WorkloadNotRunning(f"The agent's container is not running: {message}")
    error = BackendError(f"The Docker engine refused to {what}: {message}")
    error.transient = status >= 500
    return error


async def _call(session: aiohttp.ClientSession, method: str, url: str, what: str, **kwargs):
    """One JSON call: its decoded answer (None when empty), or the engine's refusal."""
    async with session.request(method, url, **kwargs) as response:
        body = await response.read()
        if response.status >= 300:
            raise _refusal(response.status, body, what)
        return orjson.loads(body) if body.strip() else None


async def _container(session, base: str, agent) -> dict:
    """The agent's container, as DockerBackend._find looks it up: by its recorded id, else by
    its label (a job that died before recording the id)."""
    if agent.container_id:
        try:
            return await _call(session, "GET", f"{base}/containers/{agent.container_id}/json", "inspect the container")
        except WorkloadMissing:
            pass
    filters = json.dumps({"label": [f"{LABEL_AGENT_ID}={agent.id}"]})
    found = await _call(session, "GET", f"{base}/containers/json", "list containers",
                        params={"all": "1", "filters": filters})
    if not found:
        raise WorkloadMissing("The agent's container no longer exists on the Docker engine.")
    return await _call(session, "GET", f"{base}/containers/{found[0]['Id']}/json", "inspect the container")


async def _open_connection(host: str):
    parts = urlsplit(host)
    if parts.scheme == "unix":
        return await asyncio.open_unix_connection(parts.path)
    return await asyncio.open_connection(parts.hostname, parts.port or 2375)


async def _start_hijacked(host: str, exec_id: str):
    """(reader, writer) of a started exec's TTY stream."""
    body = orjson.dumps({"Detach": False, "Tty": True})
    request = (f"POST /exec/{exec_id}/start HTTP/1.1\r\nHost: docker\r\nContent-Type: application/json\r\n"
               f"Connection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
    async with asyncio.timeout(CONNECT_TIMEOUT):
        reader, writer = await _open_connection(host)
        try:
            writer.write(request)
            await writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
        except BaseException:
            writer.close()
            raise
    lines = head.split(b"\r\n")
    status_line = lines[0].split(b" ")
    status = int(status_line[1]) if len(status_line) > 1 and status_line[1].isdigit() else 0
    if status in (101, 200):  # 200: an engine that streams without switching protocols
        return reader, writer
    try:  # the refusal's JSON body says why (a container that stopped meanwhile: 409)
        length = next((int(line.split(b":", 1)[1]) for line in lines
                       if line.lower().startswith(b"content-length:")), 0)
        async with asyncio.timeout(CONNECT_TIMEOUT):
            body = await reader.readexactly(min(length, HEAD_LIMIT)) if length else b""
    except (ValueError, OSError, TimeoutError, asyncio.IncompleteReadError):
        body = b""
    finally:
        writer.close()
    raise _refusal(status, body, "start the shell")


class EngineExecSession:
    """ExecSession of a shell on an engine reached by a socket (this module's docstring)."""

    def __init__(self, *, base: str, session: aiohttp.ClientSession, stack: contextlib.AsyncExitStack,
                 container_id: str, exec_id: str, marker: str, reader, writer):
        self._base = base
        self._session = session
        self._stack = stack
        self._container_id = container_id
        self._exec_id = exec_id
        self._marker = marker
        self._reader = reader
        self._writer = writer
        self._closed = False

    async def read(self) -> bytes:
        try:
            return await self._reader.read(READ_SIZE)
        except OSError:
            return b""

    async def write(self, data: bytes) -> None:
        with contextlib.suppress(OSError):  # the engine went away: read() ends the session
            self._writer.write(data)
            await self._writer.drain()

    async def resize(self, cols: int, rows: int) -> None:
        try:
            await _call(self._session, "POST", f"{self._base}/exec/{self._exec_id}/resize", "resize the terminal",
                        params={"h": str(rows), "w": str(cols)})
        except (BackendError, OSError, aiohttp.ClientError) as exc:  # the shell just ended: nothing to size
            logger.info("Resizing a terminal failed: %s", exc)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._writer.close()
        try:
            created = await _call(self._session, "POST", f"{self._base}/containers/{self._container_id}/exec",
                                  "end the shell", json={"Cmd": hangup_argv(self._marker), "AttachStdout": False,
                                                         "AttachStderr": False})
            await _call(self._session, "POST", f"{self._base}/exec/{created['Id']}/start", "end the shell",
                        json={"Detach": True, "Tty": False})
        except (BackendError, OSError, aiohttp.ClientError) as exc:
            logger.warning("Ending a terminal's processes failed (the container may be gone): %s", exc)
        finally:
            await self._stack.aclose()


async def open_engine_shell(host: str, agent, *, cols: int, rows: int) -> EngineExecSession:
    """The workload's shell with a TTY on the engine at `host` (a socket docker_async speaks)."""
    stack = contextlib.AsyncExitStack()
    try:
        base, session = await stack.enter_async_context(engine_session(host))
        container = await _container(session, base, agent)
        if not (container.get("State") or {}).get("Running"):
            raise WorkloadNotRunning(f"The agent's container is {(container.get('State') or {}).get('Status')}, "
                                     "not running.")
        marker = new_marker()
        created = await _call(session, "POST", f"{base}/containers/{container['Id']}/exec", "start a shell",
                              json={"Cmd": shell_argv(marker), "Tty": True, "AttachStdin": True,
                                    "AttachStdout": True, "AttachStderr": True})
        reader, writer = await _start_hijacked(host, created["Id"])
        terminal = EngineExecSession(base=base, session=session, stack=stack, container_id=container["Id"],
                                     exec_id=created["Id"], marker=marker, reader=reader, writer=writer)
    except (OSError, aiohttp.ClientError, TimeoutError, asyncio.IncompleteReadError,
            asyncio.LimitOverrunError) as exc:
        await stack.aclose()
        raise BackendUnreachable(f"The Docker engine at {host} cannot be reached: {exc}") from exc
    except BaseException:
        await stack.aclose()
        raise
    await terminal.resize(cols, rows)
    return terminal


def blocking_engine_session(api, container_id: str, exec_id: str, *, marker: str, reader, sock) -> ThreadedExecSession:
    """ExecSession of a started exec whose stream docker-py holds (an engine over Remote Docker's
    SSH channels), read in a thread: `reader` is the buffered file its answer's headers were
    read from (the first output may wait there), `sock` the connection under it."""
    connection = getattr(sock, "_sock", sock)  # a plain socket under docker-py's SocketIO

    def shutdown() -> None:
        with contextlib.suppress(OSError):
            connection.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            sock.close()

    def hangup() -> None:
        try:
            api.exec_start(api.exec_create(container_id, hangup_argv(marker))["Id"], detach=True)
        except Exception as exc:  # docker-py's and the transport's errors alike: the container may be gone
            logger.warning("Ending a terminal's processes failed (the container may be gone): %s", exc)

    return ThreadedExecSession(blocking_chunks(_read_some(reader, connection)), write=connection.sendall,
                               resize=lambda cols, rows: api.exec_resize(exec_id, height=rows, width=cols),
                               shutdown=shutdown, hangup=hangup)


def _read_some(reader, connection):
    """A read of whatever output has arrived. A BufferedReader's read1 does it; paramiko's channel
    file (SSH) has none and its read waits for the whole size asked, so the bytes it buffered past
    the headers come first, then the channel's own recv."""
    if hasattr(reader, "read1"):
        return lambda: reader.read1(READ_SIZE)
    buffered = [bytes(getattr(reader, "_rbuffer", b""))]

    def read() -> bytes:
        if buffered and buffered[0]:
            return buffered.pop()
        buffered.clear()
        return connection.recv(READ_SIZE)

    return read
