"""Up to 300 characters of a runtime's error body went into
error messages (API answers, `last_error`, events) that viewers read: HTML pages, stack traces,
provider keys a runtime echoed. Only the runtime's own JSON message is kept, in a short form (one
line, at most errors.RUNTIME_TEXT_MAX characters) with the call's secrets and anything shaped
like a credential replaced; a body that is not the runtime's JSON error gives no text at all."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from agents.families import OPENCLAW
from agents.gateway import http
from agents.gateway.endpoint import Endpoint
from agents.gateway.errors import RUNTIME_TEXT_MAX, GatewayError
from agents.gateway.protocol import error_from_frame

TOKEN = "gw-token-" + "k" * 40
PROVIDER_KEY = "sk-live-4f9a0c2e7b1d4e8f9a0c2e7b1d4e8f9a"
LEAKY = (f"model call failed: Authorization: Bearer {TOKEN} key={PROVIDER_KEY} password=hunter2 "
         + "padding " * 60 + "\nTraceback (most recent call last): secret internals")


def _endpoint(receiver) -> Endpoint:
    url = urlsplit(receiver.url)
    return Endpoint(family=OPENCLAW, scheme="http", host=url.hostname, port=url.port, token=TOKEN, agent_id="a1")


def _refusal(receiver, status, body) -> GatewayError:
    receiver.respond_with(status, body)
    with pytest.raises(GatewayError) as caught:
        http.request(_endpoint(receiver), "GET", "/api/thing")
    return caught.value


def _clean(message: str) -> None:
    for secret in (TOKEN, PROVIDER_KEY, "hunter2", "Traceback", "secret internals", "padding " * 20):
        assert secret not in message, message


@pytest.mark.parametrize("body", [{"error": LEAKY}, {"error": {"message": LEAKY, "code": "MODEL_FAILED"}}])
def test_a_json_error_keeps_a_short_scrubbed_message(http_receiver, body):
    error = _refusal(http_receiver, 500, body)
    message = str(error)
    _clean(message)
    assert "model call failed" in message
    assert len(message) <= len("The runtime refused GET /api/thing (HTTP 500): ") + RUNTIME_TEXT_MAX


@pytest.mark.parametrize("body", [LEAKY, f"<html><body><pre>{LEAKY}</pre></body></html>"])
def test_a_body_that_is_not_the_runtimes_json_error_gives_no_text(http_receiver, body):
    error = _refusal(http_receiver, 502, body)
    assert str(error) == "The runtime refused GET /api/thing (HTTP 502): HTTP 502"


def test_a_token_refusal_is_scrubbed_too(http_receiver):
    error = _refusal(http_receiver, 401, {"error": LEAKY})
    _clean(str(error))


def test_a_runtimes_code_is_kept_only_when_it_looks_like_one(http_receiver):
    assert _refusal(http_receiver, 500, {"error": {"message": "x", "code": "MODEL_FAILED"}}).runtime_code \
        == "MODEL_FAILED"
    assert _refusal(http_receiver, 500, {"error": {"message": "x", "code": LEAKY}}).runtime_code == ""


def test_a_websocket_error_frame_is_scrubbed_the_same_way():
    error = error_from_frame({"code": "INVALID_REQUEST", "message": LEAKY}, method="agent", secrets=(TOKEN,))
    _clean(str(error))
    assert len(str(error)) <= len("The runtime refused agent: ") + RUNTIME_TEXT_MAX
