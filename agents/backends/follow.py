"""A blocking stream read from the event loop, for targets whose client can only block (Remote
Docker over SSH channels, Kubernetes' pod log stream and exec WebSocket).

One thread per such stream reads the backend's iterator (a followed log's lines, a terminal's
output) and hands each item to the loop, a bounded number ahead of the reader. Those streams
are bounded by the stream caps (fleet.edge.streams) like every other; a Docker engine on a
socket is followed without any thread (agents.backends.docker_logs, docker_terminal).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from typing import TypeVar

logger = logging.getLogger(__name__)

AHEAD = 500  # items read ahead of a slow consumer before the thread waits
_END = object()
T = TypeVar("T")


async def follow_in_thread(lines: Iterator[T], *, ahead: int = AHEAD) -> AsyncIterator[T]:
    """The items of a blocking iterator, as they come. Leaving the loop (or the consumer going
    away) closes `lines`, which ends the thread's read."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue(maxsize=ahead)
    stop = threading.Event()

    def hand_over(item) -> bool:
        """Put `item` on the loop's queue, waiting while it is full; False once stopped."""
        while not stop.is_set():
            future = asyncio.run_coroutine_threadsafe(queue.put(item), loop)
            try:
                future.result(timeout=0.5)
                return True
            except TimeoutError:
                future.cancel()
            except RuntimeError:  # the loop is closed
                return False
        return False

    def pump() -> None:
        try:
            for line in lines:
                if not hand_over(line):
                    return
        except Exception:  # the engine failed mid-stream: the consumer sees the end
            logger.warning("Reading a followed stream failed", exc_info=True)
        hand_over(_END)

    reader = threading.Thread(target=pump, daemon=True, name="fleet-follow")
    reader.start()
    try:
        while (item := await queue.get()) is not _END:
            yield item
    finally:
        stop.set()
        close = getattr(lines, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(close)
