"""The Docker engine's API from the event loop, for what waits on an engine for long (a
followed log, a terminal): an aiohttp session on the engine's own socket, no thread held.

docker-py's client blocks a thread on every read; it stays the client of everything quick.
Only engines reached by a Unix socket or plain TCP are spoken to this way; a backend whose
engine is reached otherwise (Remote Docker's SSH channels) follows in a thread instead
(agents.backends.follow).
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import aiohttp

CONNECT_TIMEOUT = 10.0
DEFAULT_CONNECTIONS = 100  # aiohttp's own default


def speaks_natively(host: str) -> bool:
    """Whether this module reaches the engine at `host` (a DOCKER_HOST URL)."""
    return urlsplit(host).scheme in ("unix", "tcp", "http")


def _base_and_connector(host: str, connections: int) -> tuple[str, aiohttp.BaseConnector]:
    parts = urlsplit(host)
    if parts.scheme == "unix":
        return "http://docker", aiohttp.UnixConnector(path=parts.path, limit=connections)
    if parts.scheme in ("tcp", "http"):
        return f"http://{parts.netloc}", aiohttp.TCPConnector(limit=connections)
    raise ValueError(f"The engine at {host!r} is not reached over a socket this client speaks.")


@asynccontextmanager
async def engine_session(host: str, *, connections: int = DEFAULT_CONNECTIONS):
    """(base URL, session) for one conversation with the engine at `host`, at most `connections`
    requests at once; reads wait as long as the engine takes (a quiet log is not a dead engine),
    connecting does not."""
    base, connector = _base_and_connector(host, connections)
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_TIMEOUT, sock_read=None)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout, trust_env=False) as session:
        yield base, session
