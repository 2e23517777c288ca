"""Commands inside an agent's pod through the pod exec API (a WebSocket, channel.k8s.io)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from kubernetes import client as k8s
from kubernetes.stream import stream

from agents.backends.base import ExecResult

READ_SLICE = 0.2  # seconds one wait for output may take, so timeouts and stop_when are honoured


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
