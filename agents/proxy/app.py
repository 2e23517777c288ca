"""The ASGI application of every agent's proxy origin (registered with the edge for hosts
under GATEWAY_PROXY_DOMAIN, agents.apps).

    GET /__fleet__/session?ticket=...   the ticket of POST /agents/:id/gateway/session, once:
                                        sets this origin's cookie and sends the browser to /
    anything else                       relayed to the agent's runtime (HTTP or WebSocket) for
                                        the cookie's holder, checked again on every request

Refusals are the API's error body (a WebSocket is closed with 4000 + the status): 401 without
a valid cookie, 404/403 without access, 409 agent_not_running, 502 gateway_unreachable, 400
for a path or query Fleet will not pass on.
"""

from __future__ import annotations

import logging
from http.cookies import SimpleCookie
from urllib.parse import parse_qs

from django.conf import settings

from fleet.edge.django_thread import in_django_thread
from fleet.edge.responses import send_error, send_redirect
from fleet.edge.router import header
from fleet.edge.streams import astream_open
from fleet.edge.websocket import close_code_of
from fleet.errors import FleetError, InvalidRequest, NotAuthenticated

from .access import SIGN_IN_AGAIN, proxy_target
from .cookie import COOKIE_NAME, cookie_claims, cookie_value, set_cookie_header
from .hosts import agent_id_of_host
from .http_relay import relay_http
from .paths import path_refusal
from .sessions import EXCHANGE_PATH, gateway_ticket_redeem
from .ws_relay import relay_websocket

logger = logging.getLogger(__name__)

TICKET_USED = "This link has expired or was used already; open the agent's UI from Fleet again."


async def proxy_application(scope, receive, send) -> None:
    agent_id = agent_id_of_host(header(scope, b"host"))
    websocket = scope["type"] == "websocket"
    try:
        refusal = path_refusal(scope.get("raw_path") or scope["path"].encode(), scope.get("query_string") or b"")
        if refusal:
            raise InvalidRequest(refusal)
        if scope["path"] == EXCHANGE_PATH and not websocket:
            await _exchange(scope, send, agent_id)
            return
        claims = cookie_claims(_cookie(scope), agent_id=agent_id)
        if claims is None:
            raise NotAuthenticated(SIGN_IN_AGAIN)
        target = await in_django_thread(proxy_target, agent_id=agent_id, principal_ref=claims["principal"])
        if websocket:
            lease = await astream_open(user=target.user, kind="gateway-socket",
                                       per_user=settings.GATEWAY_PROXY_SOCKETS_PER_USER)
    except FleetError as exc:
        await _refuse(scope, receive, send, exc)
        return
    if not websocket:
        await relay_http(scope, receive, send, target.gateway)
        return

    async def still_allowed():
        await in_django_thread(proxy_target, agent_id=agent_id, principal_ref=claims["principal"])

    async with lease:
        relay = await in_django_thread(target.ui_relay)
        await relay_websocket(scope, receive, send, target.gateway, relay, still_allowed=still_allowed,
                              recheck_seconds=settings.GATEWAY_PROXY_RECHECK_SECONDS)


async def _exchange(scope, send, agent_id) -> None:
    ticket = (parse_qs(scope.get("query_string", b"").decode("latin-1")).get("ticket") or [""])[0]
    claims = await in_django_thread(gateway_ticket_redeem, ticket=ticket, agent_id=agent_id)
    if claims is None:
        raise NotAuthenticated(TICKET_USED)
    secure = scope.get("scheme") in ("https", "wss")
    cookie = set_cookie_header(cookie_value(agent_id=agent_id, principal=claims["principal"]), secure=secure)
    await send_redirect(send, "/", headers=[(b"set-cookie", cookie)])


def _cookie(scope) -> str:
    jar = SimpleCookie()
    try:
        jar.load(header(scope, b"cookie"))
    except Exception:  # a malformed Cookie header is no cookie
        return ""
    morsel = jar.get(COOKIE_NAME)
    return morsel.value if morsel else ""


async def _refuse(scope, receive, send, error: FleetError) -> None:
    if scope["type"] == "websocket":
        await receive()  # websocket.connect
        await send({"type": "websocket.close", "code": close_code_of(error)})
        return
    await send_error(send, error)
