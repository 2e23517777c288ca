"""Answers the edge sends itself (ASGI messages), in the API's one error shape."""

from __future__ import annotations

import orjson

from fleet.api.errors import error_body, status_of, without_addresses
from fleet.errors import FleetError


async def send_json(send, status: int, body: dict, headers: list[tuple[bytes, bytes]] = ()) -> None:
    data = orjson.dumps(body)
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            (b"cache-control", b"no-store"), *headers]})
    await send({"type": "http.response.body", "body": data})


def error_answer(error: FleetError) -> tuple[int, dict]:
    """(HTTP status, error body) of `error`, as the API answers it (5xx name no internal address)."""
    status = status_of(error)
    message = without_addresses(error.message) if status >= 500 else error.message
    return status, error_body(message, error.code)


async def send_error(send, error: FleetError) -> None:
    await send_json(send, *error_answer(error))


async def send_redirect(send, location: str, headers: list[tuple[bytes, bytes]] = ()) -> None:
    await send({"type": "http.response.start", "status": 302,
                "headers": [(b"location", location.encode("latin-1")), (b"content-length", b"0"),
                            (b"cache-control", b"no-store"), *headers]})
    await send({"type": "http.response.body", "body": b""})
