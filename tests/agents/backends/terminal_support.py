"""Driving a backend's terminal (ExecSession) from a test: read its output until a pattern shows,
and see which processes of a workload belong to a terminal (agents.backends.terminal's marker)."""

from __future__ import annotations

import asyncio
import re

from agents.backends.terminal import MARKER_VARIABLE

# Every process of the workload whose environment holds a terminal's marker, one pid per line.
MARKED_PROCESSES = ["sh", "-c", (f'for p in /proc/[0-9]*; do tr "\\0" "\\n" < "$p/environ" 2>/dev/null '
                                 f'| grep -q "^{MARKER_VARIABLE}=" && echo "${{p#/proc/}}"; done; true')]


async def output_until(session, pattern: bytes, *, timeout: float = 15) -> re.Match:
    """Read `session` until its output matches the regex `pattern` (what was typed is echoed back
    too: a pattern matches what a command printed, such as `u=(\\d+)=`)."""
    seen = b""
    async with asyncio.timeout(timeout):
        while (found := re.search(pattern, seen)) is None:
            data = await session.read()
            if not data:
                raise AssertionError(f"the shell ended before {pattern!r} showed; it said {seen[-500:]!r}")
            seen += data
    return found


async def output_to_end(session, *, timeout: float = 15) -> bytes:
    seen = b""
    async with asyncio.timeout(timeout):
        while data := await session.read():
            seen += data
    return seen
