"""WebSocket routes of Fleet's own origin: who is calling, and one way to refuse.

A WebSocket is opened by a GET that a browser sends with the site's cookies from whatever page
asks for it (cross-site WebSocket hijacking), so the `service_auth` cookie counts only when the
handshake's Origin is Fleet's own origin or one of CSRF_TRUSTED_ORIGINS. Other clients send the
API's headers (Authorization: Bearer, X-Api-Key), read by the API's rules
(fleet.api.authentication). A browser cannot put headers on a WebSocket, so a route may take a
single-use ticket in the query instead (`?ticket=`, fleet.edge.tickets), minted for the caller
by an authenticated request: its claims name the caller's principal, read back and checked
again by the app that owns principals (settings.FLEET_PRINCIPAL_READER), so the kernel imports
no app.

    @websocket_route
    async def terminal_socket(socket: Socket, agent_id: str):
        caller = await socket_caller(socket.scope, ticket_purpose="terminal")
        ...
        await socket.accept()

A route raises the errors of fleet.errors; `websocket_route` answers them alike everywhere.
Before the socket is accepted, a refusal is the API's answer (its HTTP status and error body)
where the server offers ASGI's denial response (granian does), else a close with code
4000 + that status (4401, 4403, 4404, 4409, 4429, 4502); after, a close with that code and the
error's code as the reason (docs/api.md, "WebSockets").
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cache, wraps
from io import BytesIO
from urllib.parse import parse_qs

import orjson
from django.conf import settings
from django.core.handlers.wsgi import WSGIRequest
from django.utils.module_loading import import_string

from fleet.api.authentication import read_credential, verify_credential
from fleet.api.errors import status_of
from fleet.api.origin import CrossOriginRequest, origin_allowed
from fleet.api.principal import Principal
from fleet.api.throttling import IPRateThrottle
from fleet.errors import ConflictingAuth, FleetError, InvalidCredentials, NotAuthenticated

from .django_thread import in_django_thread
from .responses import error_answer
from .router import header
from .tickets import ticket_redeem
from .wsgi import environ_of

logger = logging.getLogger("fleet.edge")

PRINCIPAL_CLAIM = "principal"  # the claim of a socket ticket that names its caller
DENIAL = "websocket.http.response"  # the ASGI extension that answers a handshake with HTTP
CLOSE_NORMAL = 1000
CLOSE_TOO_BIG = 1009
CLOSE_INTERNAL = 1011
MAX_REASON = 120  # a close frame's reason holds at most 123 bytes


def close_code_of(error: FleetError) -> int:
    """The close code of a refusal: 4000 + the HTTP status the API answers it with."""
    return 4000 + status_of(error)


class Socket:
    """One WebSocket connection as a route sees it: accept, send, receive, close or refuse.
    Sends after the client left (or after a close) are dropped."""

    def __init__(self, scope, receive, send):
        self.scope = scope
        self._receive = receive
        self._send = send
        self.accepted = False
        self.closed = False

    @property
    def client_ip(self) -> str:
        """The caller's address as the API's throttles see it (NUM_PROXIES decides X-Forwarded-For)."""
        return IPRateThrottle().get_ident(handshake_request(self.scope)) or ""

    async def accept(self) -> None:
        await self._send({"type": "websocket.accept"})
        self.accepted = True

    async def receive(self) -> dict:
        message = await self._receive()
        if message["type"] == "websocket.disconnect":
            self.closed = True
        return message

    async def send_bytes(self, data: bytes) -> None:
        if not self.closed:
            await self._send({"type": "websocket.send", "bytes": data})

    async def send_text(self, text: str) -> None:
        if not self.closed:
            await self._send({"type": "websocket.send", "text": text})

    async def close(self, code: int = CLOSE_NORMAL, reason: str = "") -> None:
        if self.closed:
            return
        self.closed = True
        await self._send({"type": "websocket.close", "code": code, "reason": reason[:MAX_REASON]})

    async def refuse(self, error: FleetError) -> None:
        """Answer `error`: before accepting, as the API would over HTTP (or a 4xxx close where the
        server cannot answer a handshake with HTTP); after, with a 4xxx close."""
        if self.closed:
            return
        if self.accepted or DENIAL not in (self.scope.get("extensions") or {}):
            await self.close(close_code_of(error), error.code)
            return
        self.closed = True
        status, answer = error_answer(error)
        body = orjson.dumps(answer)
        await self._send({"type": "websocket.http.response.start", "status": status,
                          "headers": [(b"content-type", b"application/json"),
                                      (b"content-length", str(len(body)).encode())]})
        await self._send({"type": "websocket.http.response.body", "body": body})


def websocket_route(handler):
    """An edge WebSocket handler (fleet.edge.routes.register_websocket) from
    `async handler(socket, **path_kwargs)`: the connect message is read first, the fleet.errors
    the handler raises become refusals (Socket.refuse), anything else is logged and closes the
    socket with 1011, and a socket the handler leaves open is closed."""

    @wraps(handler)
    async def serve(scope, receive, send, **kwargs):
        socket = Socket(scope, receive, send)
        if (await socket.receive())["type"] != "websocket.connect":
            return
        try:
            await handler(socket, **kwargs)
        except FleetError as error:
            await socket.refuse(error)
        except Exception:
            logger.exception("The WebSocket route %s failed", scope.get("path"))
            await socket.close(CLOSE_INTERNAL, "internal_error")
        else:
            await socket.close()

    return serve


# -- who is calling -----------------------------------------------------------------------------


@dataclass(frozen=True)
class SocketCaller:
    """The principal of a handshake, and the claims of the ticket it came with (empty when it
    came with a header or the cookie)."""

    principal: Principal
    claims: dict = field(default_factory=dict)


def handshake_request(scope: dict) -> WSGIRequest:
    """The handshake as a Django request (headers, cookies, host, scheme), so the API's own
    credential and origin rules read it. Nothing is sent to Django."""
    scheme = "https" if scope.get("scheme") == "wss" else "http"
    http_scope = {**scope, "type": "http", "method": "GET", "scheme": scheme}
    return WSGIRequest(environ_of(http_scope, BytesIO(), 0))


def query_value(scope: dict, name: str) -> str:
    """A query parameter's first value; "" when absent."""
    values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get(name)
    return values[0] if values else ""


@cache
def _principal_reader():
    return import_string(settings.FLEET_PRINCIPAL_READER)


def _redeem(purpose: str, ticket: str) -> SocketCaller | None:
    claims = ticket_redeem(purpose=purpose, ticket=ticket)
    if not isinstance(claims, dict):
        return None
    principal = _principal_reader()(claims.get(PRINCIPAL_CLAIM))
    return SocketCaller(principal, claims) if principal is not None else None


async def socket_caller(scope: dict, *, ticket_purpose: str | None = None) -> SocketCaller:
    """Who opened this WebSocket, by the rules of this module's docstring: a ticket of
    `ticket_purpose` (a route that takes tickets names their purpose), the API's headers, or the
    cookie from an allowed Origin. Raises NotAuthenticated or InvalidCredentials (401),
    ConflictingAuth (400) and CrossOriginRequest (403 csrf_failed)."""
    request = handshake_request(scope)
    credential = read_credential(request)
    ticket = query_value(scope, "ticket") if ticket_purpose else ""
    if ticket:
        # The browser adds its cookie to the ticket's handshake by itself: the ticket decides.
        if credential is not None and not credential.from_cookie:
            raise ConflictingAuth("Send a ticket or a credential header, not both.")
        caller = await in_django_thread(_redeem, ticket_purpose, ticket)
        if caller is None:
            raise InvalidCredentials("The ticket is unknown, expired or already used; ask for a new one.")
        return caller
    if credential is None:
        raise NotAuthenticated()
    if credential.from_cookie and not origin_allowed(request, header(scope, b"origin")):
        raise CrossOriginRequest("A WebSocket signed in by the session cookie must come from this site's own origin.")
    return SocketCaller(await in_django_thread(verify_credential, credential))
