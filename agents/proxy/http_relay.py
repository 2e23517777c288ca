"""One HTTP request relayed to the agent's runtime and its answer back, both bodies streamed.

To the runtime: the browser's headers without hop-by-hop ones, Fleet's cookie, the browser's
own credentials or any forwarding headers; with the runtime's auth (agents.gateway.async_http),
its own Host and origin, and no compression (the answer is scrubbed of the token on its way).
To the browser: the runtime's status, headers and body, as they come.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

import aiohttp

from fleet.edge.responses import send_error
from fleet.errors import FleetError

from ..gateway import GatewayUnreachable, RuntimeGateway
from ..gateway.async_http import open_request
from .cookie import COOKIE_NAME
from .scrub import SecretScrubber

logger = logging.getLogger(__name__)

HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "trailers",
    "transfer-encoding", "upgrade", "host", "content-length",
})
NOT_FORWARDED = HOP_BY_HOP | {"authorization", "accept-encoding", "forwarded", "x-real-ip"}
NOT_RETURNED = HOP_BY_HOP | {"content-encoding"}
READ_TIMEOUT = 300.0  # a runtime answering nothing this long mid-answer is gone


def without_fleet_cookie(value: str) -> str:
    kept = [part for part in value.split(";") if part.strip().split("=", 1)[0] != COOKIE_NAME]
    return ";".join(kept).strip()


def as_runtime_origin(value: str, endpoint) -> str:
    """An Origin or Referer of the agent's proxy origin, as if the runtime had served the page."""
    parts = urlsplit(value)
    return endpoint.origin + parts.path + (f"?{parts.query}" if parts.query else "")


def request_headers(scope: dict, endpoint) -> dict[str, str]:
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers") or ():
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        if name in NOT_FORWARDED or name.startswith("x-forwarded-"):
            continue
        if name == "cookie":
            value = without_fleet_cookie(value)
            if not value:
                continue
        if name in ("origin", "referer"):
            value = as_runtime_origin(value, endpoint)
        headers[name] = f"{headers[name]}, {value}" if name in headers and name != "cookie" else value
    headers["accept-encoding"] = "identity"
    return headers


async def _request_body(receive):
    """The browser's body: None when empty, bytes when it came in one message, else streamed."""
    first = await receive()
    if first["type"] == "http.disconnect":
        return None, True
    data = first.get("body", b"")
    if not first.get("more_body"):
        return (data or None), False

    async def rest():
        yield data
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            yield message.get("body", b"")
            if not message.get("more_body"):
                return

    return rest(), False


async def relay_http(scope: dict, receive, send, gateway: RuntimeGateway) -> None:
    endpoint = gateway.endpoint
    body, gone = await _request_body(receive)
    if gone:
        return
    target = scope["path"] + (f"?{scope['query_string'].decode('latin-1')}" if scope.get("query_string") else "")
    scrubber = SecretScrubber(endpoint.token)
    started = False
    try:
        async with open_request(endpoint, scope["method"], target, headers=request_headers(scope, endpoint),
                                data=body, read_timeout=READ_TIMEOUT) as response:
            headers = [(name.lower().encode("latin-1"), scrubber.text(value).encode("latin-1"))
                       for name, value in response.headers.items() if name.lower() not in NOT_RETURNED]
            await send({"type": "http.response.start", "status": response.status, "headers": headers})
            started = True
            async for chunk in response.content.iter_any():
                passed = scrubber.feed(chunk)
                if passed:
                    await send({"type": "http.response.body", "body": passed, "more_body": True})
            await send({"type": "http.response.body", "body": scrubber.flush()})
    except FleetError as exc:  # the runtime could not be reached: an answer, if none began
        if not started:
            await send_error(send, exc)
    except (aiohttp.ClientError, TimeoutError) as exc:  # the runtime went away mid-answer: end it there
        logger.info("The runtime of agent %s broke off an answer: %s", endpoint.agent_id, type(exc).__name__)
        if not started:
            await send_error(send, GatewayUnreachable("The agent's gateway broke off its answer."))
