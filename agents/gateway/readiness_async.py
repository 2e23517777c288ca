"""Readiness asked from the event loop, many runtimes at once (the monitoring sweep): the same
request, answer and errors as each family's ready() over `requests`, through one aiohttp session
shared by every check of a sweep instead of a new session per check.

Only provisioned endpoints: an adopted runtime's address goes through fleet.netsafety's session
(checked at connect time, redirects followed and checked), which stays the sync path.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiohttp

from . import http
from .base import Readiness, RuntimeGateway
from .errors import GatewayUnreachable, scrub

logger = logging.getLogger(__name__)

ReadinessSession = aiohttp.ClientSession


@asynccontextmanager
async def readiness_session(*, connections: int) -> AsyncIterator[ReadinessSession]:
    """One session for a sweep's checks, at most `connections` at once; it ends with the block.
    A runtime Fleet placed is reached directly, never through a proxy (as Endpoint.http_session)."""
    connector = aiohttp.TCPConnector(limit=connections)
    async with aiohttp.ClientSession(connector=connector, trust_env=False) as session:
        yield session


def _failure_name(exc: BaseException) -> str:
    """What `requests` calls the same failure, so a reason reads as the sync path's does."""
    return "ChunkedEncodingError" if isinstance(exc, aiohttp.ClientPayloadError) else "ConnectionError"


async def ask_readiness(session: ReadinessSession, gateway: RuntimeGateway) -> Readiness:
    """`gateway.ready()` over `session`; gateway errors (fleet.errors) as it raises them."""
    endpoint = gateway.endpoint
    if endpoint.external:
        raise ValueError("An adopted runtime's readiness is asked through fleet.netsafety (gateway.ready()).")
    route = endpoint.family.ready_path
    headers = {"Authorization": f"Bearer {endpoint.token}"} if gateway.ready_authenticated else {}
    # requests' timeout=N: N s to connect and N s between bytes, not a total.
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=gateway.timeout, sock_read=gateway.timeout)
    try:
        async with session.get(endpoint.http_url(route), headers=headers, allow_redirects=False,
                               timeout=timeout) as response:
            status, text = response.status, await response.text(errors="replace")
    except TimeoutError:
        raise GatewayUnreachable(
            f"The agent's gateway did not answer GET {route} within {gateway.timeout:g} s.") from None
    except (aiohttp.ClientError, OSError) as exc:
        logger.debug("Gateway GET %s of agent %s failed: %s", route, endpoint.agent_id, scrub(exc, (endpoint.token,)))
        raise GatewayUnreachable(f"The agent's gateway could not be reached ({_failure_name(exc)}).") from None
    body = http.answer_body(endpoint, "GET", route, status, text, ok_statuses=gateway.ready_ok_statuses)
    return gateway.readiness_of(status, body)
