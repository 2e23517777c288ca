"""Outbound HTTP from the event loop: one aiohttp ClientSession (and so one connection pool) per
event loop, made on first use and closed by the loop's shutdown hook.

    _pool = LoopSessions()
    async with _pool.session().request(...) as response: ...
    register_shutdown(_pool.close)

trust_env=False: a proxy from the environment would connect on Fleet's behalf, past the address
checks callers make. auto_decompress=False: bodies pass through as the far side encoded them.
No cookie jar, no limit on connections (callers cap what they open).
"""

from __future__ import annotations

import asyncio
import weakref

import aiohttp


class LoopSessions:
    def __init__(self) -> None:
        self._sessions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # event loop -> ClientSession

    def session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None or session.closed:
            session = aiohttp.ClientSession(trust_env=False, auto_decompress=False,
                                            cookie_jar=aiohttp.DummyCookieJar(),
                                            connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=None))
            self._sessions[loop] = session
        return session

    async def close(self) -> None:
        """Close the current loop's session (a shutdown hook: fleet.edge.routes.register_shutdown)."""
        session = self._sessions.pop(asyncio.get_running_loop(), None)
        if session is not None and not session.closed:
            await session.close()
