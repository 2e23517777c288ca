"""The shell a terminal opens in a workload, how its processes end, and the session over a client
that only blocks: what every target's WorkloadTerminal.attach_exec shares.

The shell is the workload's /bin/sh (both runtime images have it: bash), started through a
wrapper that exports TERM and a marker unique to the session, FLEET_TERMINAL, which every
process started from the shell inherits. Neither Docker nor Kubernetes ends an exec's process
when its connection closes (the engine holds the TTY), so closing a session runs a second,
short command (`hangup_argv`) that sends SIGHUP, then SIGKILL a second later, to every process
of the workload whose environment holds the session's marker: a terminal leaves nothing behind.
It needs only sh, tr and grep, which every image with a shell has.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable, Iterator

from .follow import follow_in_thread

SHELL = "/bin/sh"
TERM = "xterm-256color"  # what the console's xterm.js emulates
MARKER_VARIABLE = "FLEET_TERMINAL"
READ_SIZE = 65536
AHEAD = 64  # output chunks read ahead of a slow client before the reading thread waits

_WRAPPER = f'export TERM={TERM} {MARKER_VARIABLE}="$1"; exec {SHELL}'
_HANGUP = (
    'end() { for p in /proc/[0-9]*; do '
    f'tr "\\0" "\\n" < "$p/environ" 2>/dev/null | grep -qxF "{MARKER_VARIABLE}=$1" '
    '&& kill -"$2" "${p#/proc/}" 2>/dev/null; '
    'done; }; end "$1" HUP; sleep 1; end "$1" KILL; exit 0'
)


def new_marker() -> str:
    return secrets.token_hex(16)


def shell_argv(marker: str) -> list[str]:
    """The terminal's command: the workload's shell, marked as this session's."""
    return [SHELL, "-c", _WRAPPER, "sh", marker]


def hangup_argv(marker: str) -> list[str]:
    """The command that ends every process of the session marked `marker`."""
    return [SHELL, "-c", _HANGUP, "sh", marker]


def blocking_chunks(read: Callable[[], bytes]) -> Iterator[bytes]:
    """The output of a blocking `read()` until it answers b"" or fails (the connection was shut
    down by close(), or the engine went away)."""
    while True:
        try:
            data = read()
        except (OSError, ValueError, EOFError):
            return
        if not data:
            return
        yield data


class ThreadedExecSession:
    """An ExecSession over a client that only blocks (Remote Docker's SSH channels, Kubernetes'
    exec WebSocket): one thread per session reads its output (agents.backends.follow); writes,
    resizes and the close are short calls run in the loop's default executor. The stream caps
    (fleet.edge.streams) bound how many such threads a process holds."""

    def __init__(self, chunks: Iterator[bytes], *, write: Callable[[bytes], None],
                 resize: Callable[[int, int], None], shutdown: Callable[[], None], hangup: Callable[[], None]):
        self._output = follow_in_thread(chunks, ahead=AHEAD)
        self._write = write
        self._resize = resize
        self._shutdown = shutdown
        self._hangup = hangup
        self._closed = False

    async def read(self) -> bytes:
        return await anext(self._output, b"")

    async def write(self, data: bytes) -> None:
        await asyncio.to_thread(self._write, data)

    async def resize(self, cols: int, rows: int) -> None:
        await asyncio.to_thread(self._resize, cols, rows)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            await asyncio.to_thread(self._shutdown)  # ends the reading thread's read
        with contextlib.suppress(Exception):
            await self._output.aclose()
        await asyncio.to_thread(self._hangup)
