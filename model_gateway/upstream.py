"""Calls to model providers from the event loop (aiohttp): one connection pool per loop
(fleet.edge.client_pool), the provider's address checked when it is dialled.

The key's base URL passed fleet.netsafety when it was saved; it is checked again here, resolved
once, and that address is dialled (the name still goes in `Host` and TLS's server name), so DNS
cannot swap in an address the check would refuse. Redirects are not followed; bodies pass as the
provider sends them (asked for no compression, so the usage can be read on the way).
"""

from __future__ import annotations

import asyncio
import time
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import aiohttp
from django.conf import settings

from fleet import netsafety
from fleet.edge.client_pool import LoopSessions
from fleet.errors import UpstreamFailure

_pool = LoopSessions()
close_pool = _pool.close  # the edge's shutdown hook: model_gateway/apps.py


class ProviderUnreachable(UpstreamFailure):
    code = "provider_unreachable"
    default_message = "The model provider could not be reached."


RESOLVED_SECONDS = 10.0  # how long a checked address is dialled before it is resolved and checked again
# (host, port, the outbound allowlist it was checked under) -> (until, checked address)
_resolved: dict[tuple, tuple[float, str]] = {}


def _checked_address(host: str, port: int) -> str:
    """The address to dial for host:port, checked by fleet.netsafety. Blocking: DNS."""
    try:
        return str(netsafety.check_host(host, port)[0])
    except netsafety.UnsafeTarget as exc:
        raise ProviderUnreachable(f"The model provider's address is refused: {exc}") from None


async def _dialled(url: str) -> tuple[str, str, str | None]:
    """(the URL with the checked address in place of the name, the Host header, TLS's server
    name). The address is resolved in a worker thread and kept RESOLVED_SECONDS, as a resolver
    cache would: a call does not pay a thread hop for it."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    key = (parts.hostname, port, tuple(settings.OUTBOUND_ALLOWED_HOSTS))
    kept = _resolved.get(key)
    if kept is not None and kept[0] > time.monotonic():
        address = kept[1]
    else:
        address = await asyncio.to_thread(_checked_address, parts.hostname, port)
        _resolved[key] = (time.monotonic() + RESOLVED_SECONDS, address)
    host = f"[{address}]" if ":" in address else address
    name = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    host_header = name if parts.port is None else f"{name}:{parts.port}"
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    return f"{parts.scheme}://{host}:{port}{target}", host_header, parts.hostname if parts.scheme == "https" else None


@asynccontextmanager
async def provider_request(method: str, url: str, *, headers: dict, body: bytes | None):
    """The provider's response, its body not yet read. ProviderUnreachable when it cannot be
    reached or does not start answering within MODEL_GATEWAY_TIMEOUT_SECONDS."""
    dialled, host_header, server_name = await _dialled(url)
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=settings.MODEL_GATEWAY_CONNECT_TIMEOUT_SECONDS,
                                    sock_read=settings.MODEL_GATEWAY_TIMEOUT_SECONDS)
    try:
        response = await _pool.session().request(method, dialled, headers={**headers, "Host": host_header}, data=body,
                                            allow_redirects=False, timeout=timeout, server_hostname=server_name)
    except (aiohttp.ClientError, OSError) as exc:
        raise ProviderUnreachable(f"The model provider could not be reached ({type(exc).__name__}).") from None
    except TimeoutError:
        raise ProviderUnreachable("The model provider did not answer in time.") from None
    try:
        yield response
    finally:
        response.release()
