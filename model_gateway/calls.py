"""What a call asks for, read from its body before anything is sent: the model, the most
output tokens it can produce (its bound set when it names none, so the provider cannot go past
it), and its worst case at today's rate: every byte of the body as an input token (a token is at
least a byte of text) and the output bound at the model's price."""

from __future__ import annotations

import math
import time
from decimal import Decimal

import orjson
from django.conf import settings
from django.utils import timezone

from agents.rates.book import RateBook
from fleet.errors import InvalidRequest

from .wire import Route

MAX_MODEL_NAME = 200


def call_body(raw: bytes) -> dict:
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise InvalidRequest("The body must be a JSON object.") from None
    if not isinstance(body, dict):
        raise InvalidRequest("The body must be a JSON object.")
    model = body.get("model")
    if not isinstance(model, str) or not model.strip() or len(model) > MAX_MODEL_NAME:
        raise InvalidRequest("`model` must name a model (at most 200 characters).")
    return body


def _whole(body: dict, name: str) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidRequest(f"`{name}` must be a positive whole number.")
    return value


def output_bound(route: Route, body: dict) -> int:
    """The most output tokens the call can produce: the largest bound the body names (set to the
    default when it names none), times the choices it asks for (`n`)."""
    given = [value for name in route.output_limit if (value := _whole(body, name)) is not None]
    if not given:
        body[route.output_limit[0]] = settings.MODEL_GATEWAY_DEFAULT_MAX_TOKENS
        given = [settings.MODEL_GATEWAY_DEFAULT_MAX_TOKENS]
    return max(given) * (_whole(body, "n") or 1)


_book: tuple[float, RateBook] | None = None


def _rate_book() -> RateBook:
    """The rate book, read at most every MODEL_GATEWAY_RATE_BOOK_SECONDS by this process: a
    call's worst case is priced without a round trip (what it is charged is priced afresh when
    it settles)."""
    global _book
    now = time.monotonic()
    if _book is None or _book[0] <= now:
        _book = (now + settings.MODEL_GATEWAY_RATE_BOOK_SECONDS, RateBook.load())
    return _book[1]


def worst_case_micros(*, model: str, provider: str, input_bound: int, output_bound: int) -> int | None:
    """The most the call can cost at today's rate (micro-dollars, rounded up); None when the
    rate book has no price for the model (its calls are recorded at no cost)."""
    price, _ = _rate_book().price(model=model, provider=provider, day=timezone.now().date())
    if price is None:
        return None
    cost = Decimal(input_bound) * price.input_usd_per_mtok + Decimal(output_bound) * price.output_usd_per_mtok
    return math.ceil(cost)
