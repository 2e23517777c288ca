"""/llm/v1 on the async edge: a call admitted in Django's thread, sent to the provider from the
event loop, its answer passed to the runtime as it arrives, then settled in Django's thread.

No thread waits on a provider: a web process holds as many calls as it has sockets. The answer's
status and headers are the provider's (its errors pass through as they are: Fleet never sends a
call twice, so it is never billed twice). When the runtime leaves mid-answer the provider's answer
is still read to its end, without sending it on, so the call is billed for what the provider
reports; an answer that ends without figures (the provider broke off) records no usage.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import aiohttp
from django.conf import settings
from django.db import close_old_connections

from agents.internal_url import MODEL_GATEWAY_PATH
from fleet.api.errors import DATABASE_AWAY, database_away
from fleet.edge.django_thread import in_django_thread
from fleet.edge.responses import error_answer, send_json
from fleet.edge.router import header
from fleet.edge.wsgi import wait_for_disconnect
from fleet.errors import FleetError, NotFound, PayloadTooLarge

from .admission import Admission, admit, model_list
from .errors import RateLimited
from .settle import settle_later
from .settlement import Ended
from .traffic import FORWARDED
from .upstream import ProviderUnreachable, provider_request
from .wire import ANTHROPIC, OPENAI, ROUTES, Route, UsageMeter, error_body

logger = logging.getLogger(__name__)

# The provider's headers passed to the runtime; hop-by-hop and length headers are the server's.
PASSED_RESPONSE_HEADERS = frozenset({
    b"content-type", b"retry-after", b"request-id", b"x-request-id", b"openai-processing-ms",
    b"openai-version", b"anthropic-ratelimit-requests-remaining", b"anthropic-ratelimit-tokens-remaining",
    b"x-ratelimit-limit-requests", b"x-ratelimit-limit-tokens", b"x-ratelimit-remaining-requests",
    b"x-ratelimit-remaining-tokens", b"x-ratelimit-reset-requests", b"x-ratelimit-reset-tokens",
})
REQUEST_ID_HEADER = b"x-fleet-request-id"
WHOLE_ANSWER_BYTES = 1 << 20  # a provider's answer (not a stream) up to this size is sent in one piece


def _token(scope: dict) -> str:
    """The agent's token as OpenAI clients send a key (Bearer) or Anthropic's (x-api-key)."""
    authorization = header(scope, b"authorization")
    if authorization[:7].lower() == "bearer ":
        return authorization[7:].strip()
    return header(scope, b"x-api-key").strip()


async def _read_body(receive) -> bytes | None:
    """The request body, or None when the client left; PayloadTooLarge past the limit."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > settings.MODEL_GATEWAY_MAX_BODY_BYTES:
            raise PayloadTooLarge(f"The body is larger than {settings.MODEL_GATEWAY_MAX_BODY_BYTES} bytes.")
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


async def _refuse(send, wire: str, error: FleetError) -> None:
    status, body = error_answer(error)
    retry = [(b"retry-after", str(error.retry_after).encode())] if isinstance(error, RateLimited) else []
    await send_json(send, status, error_body(wire, status, body["code"], body["error"]), retry)


async def model_gateway_app(scope, receive, send) -> None:
    if scope["type"] != "http":
        await receive()
        await send({"type": "websocket.close", "code": 1008})
        return
    path = scope["path"][len(MODEL_GATEWAY_PATH):].rstrip("/") or "/"
    route = ROUTES.get((scope["method"], path))
    wire = route.wire if route is not None else (ANTHROPIC if path.endswith("/messages") else OPENAI)
    try:
        raw = await _read_body(receive)
        if raw is None:
            return
        if route is None:
            raise _NoSuchRoute(f"No such route: {scope['method']} {MODEL_GATEWAY_PATH}{path}.")
        sent = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope.get("headers") or ()}
        admission = await in_django_thread(_admitted, route=route, token=_token(scope), raw_body=raw, sent_headers=sent)
    except FleetError as error:
        await _refuse(send, wire, error)
        return
    except DATABASE_AWAY as exc:  # a restart or a failover: this call is not sent, the next one may be
        await _refuse(send, wire, database_away(exc, scope["method"], scope["path"]))
        return
    if admission.listed_models is not None:
        await send_json(send, 200, model_list(admission))
        return
    await _forward(admission, route, receive, send)


def _admitted(**call) -> Admission:
    """`admit` with the Django thread's connection handled as a request handles it: one that
    broke (its error seen by an earlier call) or grew old is replaced first."""
    close_old_connections()
    return admit(**call)


class _NoSuchRoute(NotFound):
    code = "not_found"


async def _forward(admission: Admission, route: Route, receive, send) -> None:
    meter, outcome = UsageMeter(streamed=False), "provider_unreachable"
    try:
        async with provider_request(route.method, admission.url, headers=admission.headers,
                                    body=admission.body or None) as response:
            outcome = FORWARDED if response.status < 400 else f"provider_{response.status}"
            meter = UsageMeter(streamed=response.headers.get("content-type", "").startswith("text/event-stream"))
            await _relay(admission, response, meter, receive, send)
    except ProviderUnreachable as error:
        await _refuse(send, route.wire, error)
    except (aiohttp.ClientError, TimeoutError) as exc:  # broken off mid-answer: the runtime sees the end
        logger.warning("The provider broke off call %s: %s", admission.request_id, type(exc).__name__)
        outcome = "provider_broke_off"
    finally:
        # Settled whatever happened above, even when this task is cancelled (the client left).
        if route.carries_a_call:  # a listing is no call
            settle_later(Ended(admission, meter.usage, outcome))


async def _relay(admission: Admission, response, meter: UsageMeter, receive, send) -> None:
    headers = [(name.lower(), value) for name, value in response.raw_headers
               if name.lower() in PASSED_RESPONSE_HEADERS]
    headers.append((REQUEST_ID_HEADER, str(admission.request_id).encode()))
    if _whole(response, meter):
        # A small answer that is not a stream goes out in one piece with its length: one send
        # instead of a chunked body's three, and no watch for the client leaving meanwhile.
        body = await response.read()
        meter.feed(body)
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": response.status, "headers": headers})
        await _sent(send, body, more=False)
        return
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    left = asyncio.ensure_future(wait_for_disconnect(receive))
    try:
        async for chunk in response.content.iter_any():
            meter.feed(chunk)
            # Once the runtime has left, the rest is read for the provider's figures only.
            if not left.done() and not await _sent(send, chunk, more=True):
                left.cancel()
        if not left.done():
            await _sent(send, b"", more=False)
    finally:
        left.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await left


def _whole(response, meter: UsageMeter) -> bool:
    """An answer sent in one piece: not a stream, its length known and small (the provider is
    asked for it unencoded: admission's `accept-encoding: identity`)."""
    return not meter.streamed and response.content_length is not None and response.content_length <= WHOLE_ANSWER_BYTES


async def _sent(send, chunk: bytes, *, more: bool) -> bool:
    """Send a piece of the answer; False when the connection is gone (the server says so by raising)."""
    try:
        await send({"type": "http.response.body", "body": chunk, "more_body": more})
    except OSError:
        return False
    return True
