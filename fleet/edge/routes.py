"""What the async edge routes before Django: WebSocket paths, HTTP path prefixes and whole hosts.

The kernel imports no app, so apps register their ASGI handlers from `AppConfig.ready()`, the
way Django's URLconf names app modules by string:

    register_websocket(r"^/api/agents/(?P<agent_id>[^/]+)/terminal$", terminal_socket)
    register_http("/llm/v1", model_gateway_app)
    register_host(agent_proxy_host, agent_proxy_app)
    register_shutdown(close_pool)

A WebSocket handler is `async (scope, receive, send, **path_kwargs)`; a host app is a plain
ASGI application for every request whose Host the matcher accepts (`matcher(host) -> bool`).
A shutdown hook is `async ()`, awaited on the event loop it served when that loop's work ends
(the server's lifespan shutdown), to close what the loop holds open (connection pools).
Everything else, every HTTP request of Fleet's own origin included, goes to Django.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

logger = logging.getLogger(__name__)

Asgi = Callable[..., Awaitable[None]]


@dataclass(frozen=True)
class WebSocketRoute:
    pattern: re.Pattern
    handler: Asgi


@dataclass(frozen=True)
class HostRoute:
    matches: Callable[[str], bool]
    app: Asgi


@dataclass(frozen=True)
class HttpRoute:
    prefix: str
    app: Asgi


_websockets: list[WebSocketRoute] = []
_http: list[HttpRoute] = []
_hosts: list[HostRoute] = []
_shutdown_hooks: list[Callable[[], Awaitable[None]]] = []


def register_websocket(pattern: str, handler: Asgi) -> None:
    """Serve WebSocket connections whose path matches `pattern` (named groups become keyword
    arguments of the handler). Registering the same pattern again replaces it."""
    compiled = re.compile(pattern)
    _websockets[:] = [route for route in _websockets if route.pattern.pattern != pattern]
    _websockets.append(WebSocketRoute(compiled, handler))


def register_http(prefix: str, app: Asgi) -> None:
    """Serve HTTP requests whose path is `prefix` or lies under `prefix/` with `app`."""
    prefix = prefix.rstrip("/")
    _http[:] = [route for route in _http if route.prefix != prefix]
    _http.append(HttpRoute(prefix, app))


def register_host(matches: Callable[[str], bool], app: Asgi) -> None:
    """Serve every request (HTTP and WebSocket) whose Host header `matches` with `app`."""
    _hosts[:] = [route for route in _hosts if route.matches is not matches]
    _hosts.append(HostRoute(matches, app))


def register_shutdown(hook: Callable[[], Awaitable[None]]) -> None:
    """Await `hook()` when the edge's event loop shuts down (registered once per hook)."""
    if hook not in _shutdown_hooks:
        _shutdown_hooks.append(hook)


async def shutdown() -> None:
    """Run every shutdown hook on the current loop; one failing does not stop the others."""
    for hook in _shutdown_hooks:
        try:
            await hook()
        except Exception:  # shutting down: log it and close the rest
            logger.exception("An edge shutdown hook failed: %r", hook)


def websocket_route(path: str) -> tuple[Asgi, dict[str, str]] | None:
    for route in _websockets:
        found = route.pattern.match(path)
        if found:
            return route.handler, found.groupdict()
    return None


def http_prefix_app(path: str) -> Asgi | None:
    for route in _http:
        if path == route.prefix or path.startswith(route.prefix + "/"):
            return route.app
    return None


def host_app(host: str) -> Asgi | None:
    for route in _hosts:
        if route.matches(host):
            return route.app
    return None
