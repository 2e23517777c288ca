"""The ASGI application of the `web` process: one port for Fleet's API, its console, the
agents' own origins and every WebSocket.

    application = EdgeRouter(django_application)

In order: the lifespan protocol is answered here; a request whose Host belongs to a registered
host app (an agent's UI origin) goes to that app, whatever its path; a WebSocket goes to the
handler registered for its path, and is refused (HTTP 403 before accepting, which is all a
browser can see) when none is; an HTTP request under a registered prefix goes to that app; every
other HTTP request goes to Django, where synchronous views stay synchronous.
"""

from __future__ import annotations

import logging

from .routes import host_app, http_prefix_app, shutdown, websocket_route

logger = logging.getLogger("fleet.edge")


def header(scope: dict, name: bytes) -> str:
    """A request header's value (the first one), decoded as Latin-1 as HTTP says; "" when absent."""
    for key, value in scope.get("headers") or ():
        if key == name:
            return value.decode("latin-1")
    return ""


class EdgeRouter:
    def __init__(self, http_app):
        self.http_app = http_app

    async def __call__(self, scope, receive, send):
        kind = scope["type"]
        if kind == "lifespan":
            await self._lifespan(receive, send)
            return
        app = host_app(header(scope, b"host").lower())
        if app is not None:
            await app(scope, receive, send)
            return
        if kind == "websocket":
            await self._websocket(scope, receive, send)
            return
        await (http_prefix_app(scope.get("path", "")) or self.http_app)(scope, receive, send)

    async def _websocket(self, scope, receive, send) -> None:
        found = websocket_route(scope.get("path", ""))
        if found is None:
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1008})
            return
        handler, kwargs = found
        await handler(scope, receive, send, **kwargs)

    @staticmethod
    async def _lifespan(receive, send) -> None:
        # Nothing to open: Django opens its connections per request, the apps' pools on first use.
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return
