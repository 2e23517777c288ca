"""Run coroutines side by side until the first ends (a relay's two directions, its idle timer,
its access re-check): the others are cancelled and awaited, so none outlives the connection."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine


async def first_to_end(*coroutines: Coroutine) -> asyncio.Task:
    """The task of the first coroutine to end (its result or exception left in it)."""
    tasks = [asyncio.create_task(coroutine) for coroutine in coroutines]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        return next(task for task in tasks if task in done)
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
