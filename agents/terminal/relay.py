"""A terminal's frames between the WebSocket and the shell, on the event loop.

Binary frames are the TTY's bytes both ways; a text frame from the client is a resize,
`{"type": "resize", "cols": 1-1000, "rows": 1-1000}`; any other text frame is ignored (a client
that speaks a newer protocol must not lose its shell over it). It ends when one of these comes
first:

- the shell ends (or the engine's stream does): close 1000 `exited`;
- the client leaves: `closed`;
- neither input nor output for TERMINAL_IDLE_SECONDS: close 4408 `idle_timeout`;
- the periodic re-check (every TERMINAL_RECHECK_SECONDS) finds the caller's session revoked or
  its access gone: a close with that refusal's code (4401, 4403, 4404, 4409);
- a stdin frame above MAX_INPUT bytes: close 1009 `frame_too_big`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import orjson

from fleet.edge.racing import first_to_end
from fleet.edge.websocket import CLOSE_NORMAL, CLOSE_TOO_BIG, Socket, close_code_of
from fleet.errors import FleetError

from ..backends.base import ExecSession
from ..models import TerminalEnd

MAX_INPUT = 1024 * 1024  # one stdin frame (a large paste)
MAX_SIZE = 1000  # columns or rows
CLOSE_IDLE = 4408


@dataclass(frozen=True)
class Ending:
    """How a terminal ended: what its record says, and the close the client gets (None: the
    client is gone already)."""

    reason: str
    code: int | None = None
    text: str = ""


def resize_of(text: str) -> tuple[int, int] | None:
    """(cols, rows) of a resize frame; None for anything else."""
    if len(text) > 200:
        return None
    try:
        frame = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(frame, dict) or frame.get("type") != "resize":
        return None
    cols, rows = frame.get("cols"), frame.get("rows")
    if not all(type(value) is int and 1 <= value <= MAX_SIZE for value in (cols, rows)):
        return None
    return cols, rows


class _Activity:
    def __init__(self):
        self._loop = asyncio.get_running_loop()
        self.last = self._loop.time()

    def touch(self) -> None:
        self.last = self._loop.time()

    def idle_for(self) -> float:
        return self._loop.time() - self.last


async def _output(shell: ExecSession, socket: Socket, activity: _Activity) -> Ending:
    while data := await shell.read():
        activity.touch()
        await socket.send_bytes(data)
    return Ending(TerminalEnd.EXITED, CLOSE_NORMAL, "exited")


async def _input(shell: ExecSession, socket: Socket, activity: _Activity) -> Ending:
    while True:
        message = await socket.receive()
        if message["type"] == "websocket.disconnect":
            return Ending(TerminalEnd.CLOSED)
        data = message.get("bytes")
        if data is not None:
            if len(data) > MAX_INPUT:
                return Ending(TerminalEnd.CLOSED, CLOSE_TOO_BIG, "frame_too_big")
            activity.touch()
            await shell.write(data)
        elif (size := resize_of(message.get("text") or "")) is not None:
            await shell.resize(*size)


async def _idle(activity: _Activity, idle_seconds: float) -> Ending:
    while (left := idle_seconds - activity.idle_for()) > 0:
        await asyncio.sleep(left)
    return Ending(TerminalEnd.IDLE, CLOSE_IDLE, "idle_timeout")


async def _recheck(recheck: Callable[[], Awaitable[FleetError | None]], every: float) -> Ending:
    while True:
        await asyncio.sleep(every)
        refusal = await recheck()
        if refusal is not None:
            return Ending(TerminalEnd.REVOKED, close_code_of(refusal), refusal.code)


async def relay(socket: Socket, shell: ExecSession, *, idle_seconds: float, recheck_every: float,
                recheck: Callable[[], Awaitable[FleetError | None]]) -> Ending:
    """Carry frames until the first ending of the module's docstring; close the WebSocket with
    it and answer it. `recheck()` answers the refusal that now applies to the caller, or None."""
    activity = _Activity()
    first = await first_to_end(_output(shell, socket, activity), _input(shell, socket, activity),
                               _idle(activity, idle_seconds), _recheck(recheck, recheck_every))
    ending = first.result()
    if ending.code is not None:
        await socket.close(ending.code, ending.text)
    return ending
