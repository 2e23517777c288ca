"""The provider's figures read from each wire format, whole or streamed in any chunking, and the
hourly purge of lapsed reservations and old traffic."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from model_gateway.models import Reservation, TrafficHour
from model_gateway.purge import gateway_purge
from model_gateway.traffic import MAX_HOURS
from model_gateway.wire import Usage, UsageMeter, error_body


def _sse(*events: dict) -> bytes:
    return b"".join(f"data: {json.dumps(event)}\n\n".encode() for event in events) + b"data: [DONE]\n\n"


RESPONSES_STREAM = _sse(
    {"type": "response.created", "response": {"id": "r1", "usage": None}},
    {"type": "response.output_text.delta", "delta": "Hi"},
    {"type": "response.completed", "response": {"id": "r1", "usage": {"input_tokens": 11, "output_tokens": 7}}},
)
CHAT_STREAM = _sse({"choices": [{"delta": {"content": "Hi"}}]},
                   {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3}})


@pytest.mark.parametrize(("body", "usage"), [(RESPONSES_STREAM, Usage(11, 7)), (CHAT_STREAM, Usage(5, 3))])
@pytest.mark.parametrize("size", [1, 7, 64, 100_000])
def test_a_stream_is_read_in_whatever_pieces_it_comes(body, usage, size):
    meter = UsageMeter(streamed=True)
    for start in range(0, len(body), size):
        meter.feed(body[start:start + size])
    assert meter.usage == usage


def test_a_whole_answer_is_read_at_its_end_and_a_broken_one_gives_no_figures():
    meter = UsageMeter(streamed=False)
    for piece in (b'{"usage": {"input_tokens": 3, ', b'"output_tokens": 4}}'):
        meter.feed(piece)
    assert meter.usage == Usage(3, 4)
    broken = UsageMeter(streamed=False)
    broken.feed(b'{"usage": {"input_tok')
    assert broken.usage is None
    assert UsageMeter(streamed=True).usage is None


def test_an_answer_without_figures_or_with_nonsense_figures_gives_none():
    meter = UsageMeter(streamed=True)
    meter.feed(_sse({"usage": {"prompt_tokens": -1, "completion_tokens": "many"}}, {"usage": "x"}))
    assert meter.usage is None


def test_errors_take_each_formats_shape():
    assert error_body("openai", 429, "rate_limited", "Slow down.") == {
        "error": {"message": "Slow down.", "type": "rate_limit_error", "param": None, "code": "rate_limited"}}
    assert error_body("anthropic", 401, "invalid_credentials", "No.") == {
        "type": "error", "error": {"type": "authentication_error", "code": "invalid_credentials", "message": "No."}}


@pytest.mark.django_db
def test_the_purge_drops_lapsed_reservations_and_traffic_older_than_the_window(tenancy):
    agent = tenancy.agent()
    now = timezone.now()
    Reservation.objects.create(agent=agent, worst_micros=1, expires_at=now - timedelta(seconds=1))
    kept = Reservation.objects.create(agent=agent, worst_micros=1, expires_at=now + timedelta(minutes=5))
    TrafficHour.objects.create(agent=agent, hour=now - timedelta(hours=MAX_HOURS + 2), outcome="forwarded", count=1)
    recent = TrafficHour.objects.create(agent=agent, hour=now - timedelta(hours=2), outcome="forwarded", count=1)
    assert gateway_purge() == (1, 1)
    assert list(Reservation.objects.all()) == [kept] and list(TrafficHour.objects.all()) == [recent]
