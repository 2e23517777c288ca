"""A chat turn's frames (agents.gateway.openclaw._next_frame): a frame as soon as it arrives, and
the end of the turn at once when the runtime closes the connection (a restart mid-turn), never a
wait of the turn's whole idle limit on a dead connection."""

from __future__ import annotations

import asyncio

import pytest

from agents.gateway.openclaw import _next_frame


class Connection:
    """What _next_frame asks of a connection: when its reader ended."""

    def __init__(self) -> None:
        self.ended = asyncio.Event()

    async def wait_closed(self) -> None:
        await self.ended.wait()


@pytest.mark.asyncio
async def test_a_queued_frame_comes_first():
    frames, connection = asyncio.Queue(), Connection()
    frames.put_nowait({"event": "chat"})
    connection.ended.set()

    assert await _next_frame(frames, connection) == {"event": "chat"}


@pytest.mark.asyncio
async def test_a_frame_arriving_later_is_awaited():
    frames, connection = asyncio.Queue(), Connection()
    asyncio.get_running_loop().call_later(0.05, frames.put_nowait, {"event": "agent"})

    assert await asyncio.wait_for(_next_frame(frames, connection), timeout=5) == {"event": "agent"}


@pytest.mark.asyncio
async def test_a_closed_connection_ends_the_wait_at_once():
    frames, connection = asyncio.Queue(), Connection()
    asyncio.get_running_loop().call_later(0.05, connection.ended.set)

    assert await asyncio.wait_for(_next_frame(frames, connection), timeout=5) is None
