"""A WebSocket of the runtime's UI relayed both ways, frame by frame, through the family's
UiRelay (OpenClaw's connect rewritten: agents.gateway.ui_relay) and the token scrubber.

The runtime is dialled at the address its endpoint checked (no re-resolution), with the
runtime's own origin. The holder's access is checked again every RECHECK_SECONDS: a revoked
session or a lost role closes the socket (4401/4403)."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import websockets
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from fleet.edge.racing import first_to_end
from fleet.edge.router import header
from fleet.edge.websocket import close_code_of
from fleet.errors import FleetError

from ..gateway import GatewayUnreachable, RuntimeGateway
from ..gateway.ui_relay import UiRelay
from .http_relay import request_headers
from .scrub import SecretScrubber

logger = logging.getLogger(__name__)

OPEN_TIMEOUT = 10.0
MAX_FRAME_BYTES = 16 * 1024 * 1024
# Headers of the browser's upgrade that must not be copied: the library sets its own.
UPGRADE_HEADERS = frozenset({"sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions",
                             "sec-websocket-protocol", "origin"})


async def _dial(gateway: RuntimeGateway, scope: dict, subprotocols: list[str]):
    endpoint = gateway.endpoint
    target = scope["path"] + (f"?{scope['query_string'].decode('latin-1')}" if scope.get("query_string") else "")
    headers = {name: value for name, value in request_headers(scope, endpoint).items()
               if name not in UPGRADE_HEADERS and name != "accept-encoding"}
    last: Exception | None = None
    for address in await asyncio.to_thread(endpoint.dial_addresses):
        try:
            return await websockets.connect(
                endpoint.ws_url_for(target), host=address, port=endpoint.port, proxy=None, origin=endpoint.origin,
                subprotocols=subprotocols or None, additional_headers=headers, max_size=MAX_FRAME_BYTES,
                open_timeout=OPEN_TIMEOUT, compression=None,
            )
        except (OSError, TimeoutError, InvalidHandshake) as exc:
            last = exc
    raise GatewayUnreachable(f"The agent's UI socket could not be opened ({type(last).__name__}).")


async def relay_websocket(scope: dict, receive, send, gateway: RuntimeGateway, relay: UiRelay, *, still_allowed,
                          recheck_seconds: float) -> None:
    """Accept the browser's socket once the runtime's is open, then relay until either ends.
    `still_allowed()` (async) raises a FleetError when the holder lost the agent."""
    await receive()  # websocket.connect
    offered = [p.strip() for p in header(scope, b"sec-websocket-protocol").split(",") if p.strip()]
    try:
        upstream = await _dial(gateway, scope, offered)
    except FleetError as exc:
        await send({"type": "websocket.close", "code": close_code_of(exc)})
        return
    scrubber = SecretScrubber(gateway.endpoint.token)
    await send({"type": "websocket.accept", "subprotocol": upstream.subprotocol})
    try:
        first = await first_to_end(_browser_to_runtime(receive, upstream, relay),
                                   _runtime_to_browser(upstream, send, relay, scrubber),
                                   _watch_access(still_allowed, recheck_seconds))
        code = first.result() if not first.cancelled() and first.exception() is None else 1000
    finally:
        await upstream.close()
    with contextlib.suppress(Exception):  # the browser may be gone already
        await send({"type": "websocket.close", "code": code or 1000})


async def _browser_to_runtime(receive, upstream, relay) -> int:
    while True:
        message = await receive()
        if message["type"] == "websocket.disconnect":
            return 1000
        frame = message.get("text") if message.get("text") is not None else message.get("bytes")
        frame = relay.to_runtime(frame)
        if frame is not None:
            await upstream.send(frame)


async def _runtime_to_browser(upstream, send, relay, scrubber) -> int:
    try:
        async for frame in upstream:
            frame = relay.to_browser(frame)
            if frame is None:
                continue
            if isinstance(frame, str):
                await send({"type": "websocket.send", "text": scrubber.text(frame)})
            else:
                await send({"type": "websocket.send", "bytes": scrubber.whole(frame)})
    except ConnectionClosed:
        pass
    code = upstream.close_code
    return code if code and code not in (1005, 1006, 1015) else 1000


async def _watch_access(still_allowed, every: float) -> int:
    while True:
        await asyncio.sleep(every)
        try:
            await still_allowed()
        except FleetError as exc:
            return close_code_of(exc)
