"""HTTP to a gateway from the event loop (aiohttp), for what streams or waits: a chat turn's
events, the gateway proxy's requests.

The address dialled is the one `Endpoint.dial_addresses()` checked (for adopted agents,
fleet.netsafety's rules at connect time, resolved once: DNS cannot swap in another address
between the check and the connect); the endpoint's name still goes in `Host` and TLS's server
name. Redirects are never followed: a runtime has no reason to send Fleet elsewhere, and the
proxy hands them to the browser. One connection pool per event loop keeps connections alive
(fleet.edge.client_pool).
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import asynccontextmanager

import aiohttp

from fleet.edge.client_pool import LoopSessions

from .endpoint import Endpoint
from .errors import GatewayUnreachable, scrub

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT = 10.0
_pool = LoopSessions()
_session = _pool.session
close_pool = _pool.close  # the edge's shutdown hook: agents/apps.py


def auth_headers(endpoint: Endpoint) -> dict[str, str]:
    """What a runtime needs to see to trust a request (both families take the token as Bearer)."""
    return {"Authorization": f"Bearer {endpoint.token}"}


def _url(endpoint: Endpoint, address: str, target: str) -> str:
    host = f"[{address}]" if ":" in address else address
    return f"{endpoint.scheme}://{host}:{endpoint.port}{endpoint.path}{target}"


def host_header(endpoint: Endpoint) -> str:
    host = f"[{endpoint.host}]" if ":" in endpoint.host else endpoint.host
    return f"{host}:{endpoint.port}"


@asynccontextmanager
async def open_request(endpoint: Endpoint, method: str, target: str, *, headers: dict | None = None,
                       data=None, authenticated: bool = True, read_timeout: float | None = None):
    """The runtime's response to one request (`target` is the path and query under the
    endpoint), its body not yet read. GatewayUnreachable when no checked address answers."""
    sent = {**(headers or {}), "Host": host_header(endpoint)}
    if authenticated:
        sent.update(auth_headers(endpoint))
    addresses = await asyncio.to_thread(endpoint.dial_addresses)  # DNS and the address check block
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_TIMEOUT, sock_read=read_timeout)
    last: Exception | None = None
    for address in addresses:
        try:
            response = await _session().request(
                method, _url(endpoint, address, target), headers=sent, data=data, allow_redirects=False,
                timeout=timeout, server_hostname=endpoint.host if endpoint.scheme == "https" else None,
            )
        except (aiohttp.ClientConnectionError, OSError) as exc:
            last = exc
            continue
        except TimeoutError:
            raise GatewayUnreachable(f"The agent's gateway did not answer {method} within {CONNECT_TIMEOUT:g} s.") \
                from None
        try:
            yield response
        finally:
            response.release()
        return
    logger.debug("Reaching the gateway of agent %s failed: %s", endpoint.agent_id, scrub(last, (endpoint.token,)))
    raise GatewayUnreachable(f"The agent's gateway could not be reached ({type(last).__name__}).")
