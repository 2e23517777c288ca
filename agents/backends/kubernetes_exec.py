"""Commands and terminals inside an agent's pod through the pod exec API (a WebSocket,
channel.k8s.io)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence

from kubernetes import client as k8s
from kubernetes.stream import stream
from kubernetes.stream.ws_client import RESIZE_CHANNEL, STDOUT_CHANNEL
from websocket import WebSocketException

from agents.backends.base import ExecResult
from agents.backends.terminal import ThreadedExecSession, blocking_chunks, hangup_argv, new_marker, shell_argv

logger = logging.getLogger(__name__)

READ_SLICE = 0.2  # seconds one wait for output may take, so timeouts and stop_when are honoured
READ_WAIT = 1.0  # seconds a terminal's reading thread waits on the socket before it looks again
HANGUP_TIMEOUT = 10.0  # the hangup command takes about a second (agents.backends.terminal)


def run_in_pod(core: k8s.CoreV1Api, namespace: str, pod: str, container: str, argv: Sequence[str], *,
               stdin: bytes | None, timeout: float, max_output: int,
               stop_when: Callable[[bytes], bool] | None, as_result: bool = False):
    """Run `argv` (never a shell string: the API passes each word as one argument) in the pod's
    container, feeding `stdin` if given. Answers ExecResult with `as_result`, else (exit code,
    output). The exit code is None when the command was still running when we stopped waiting."""
    client = stream(core.connect_get_namespaced_pod_exec, pod, namespace, container=container,
                    command=list(argv), stdin=stdin is not None, stdout=True, stderr=True, tty=False,
                    binary=True, _preload_content=False, _request_timeout=timeout)
    output, truncated, ended = bytearray(), False, None
    deadline = time.monotonic() + timeout
    try:
        if stdin is not None:
            client.write_stdin(stdin)
            client.close_channel(0)  # end of input
        while True:
            client.update(timeout=max(min(READ_SLICE, deadline - time.monotonic()), 0))
            for chunk in (client.read_stdout(timeout=0) if client.peek_stdout() else b"",
                          client.read_stderr(timeout=0) if client.peek_stderr() else b""):
                if not chunk:
                    continue
                room = max(max_output - len(output), 0)
                truncated = truncated or len(chunk) > room
                output += chunk[:room]
            if not client.is_open():
                ended = True
                break
            if stop_when is not None and stop_when(bytes(output)):
                ended = False
                break
            if time.monotonic() >= deadline:
                break
        code = client.returncode if ended else None
    finally:
        client.close()
    if as_result:
        return ExecResult(exit_code=code, output=bytes(output), timed_out=ended is None, truncated=truncated)
    return code, bytes(output)


def open_pod_shell(core: k8s.CoreV1Api, namespace: str, pod: str, container: str, *,
                   cols: int, rows: int) -> ThreadedExecSession:
    """The container's shell with a TTY (agents.backends.terminal) through the exec subresource:
    stdin on channel 0, the TTY's output on channel 1 (a TTY has no stderr), its size as JSON on
    channel 4. The client's WebSocket only blocks, so a thread reads it; its sends are locked,
    so writes may come from other threads."""
    marker = new_marker()
    client = stream(core.connect_get_namespaced_pod_exec, pod, namespace, container=container,
                    command=shell_argv(marker), stdin=True, stdout=True, stderr=False, tty=True,
                    binary=True, _preload_content=False)

    def read() -> bytes:
        try:
            while True:
                data = client.read_channel(STDOUT_CHANNEL)
                if data or not client.is_open():
                    return data or b""
                client.update(timeout=READ_WAIT)
        except WebSocketException:  # closed under the reader by close()
            return b""

    def resize(width: int, height: int) -> None:
        client.write_channel(RESIZE_CHANNEL, json.dumps({"Width": width, "Height": height}).encode())

    def hangup() -> None:
        try:
            run_in_pod(core, namespace, pod, container, hangup_argv(marker), stdin=None, timeout=HANGUP_TIMEOUT,
                       max_output=1024, stop_when=None)
        except Exception as exc:  # the client's and the transport's errors alike: the pod may be gone
            logger.warning("Ending a terminal's processes failed (the pod may be gone): %s", exc)

    resize(cols, rows)
    return ThreadedExecSession(blocking_chunks(read), write=client.write_stdin, resize=resize,
                               shutdown=client.close, hangup=hangup)
