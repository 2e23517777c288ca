"""Calls through /llm/v1 on the edge, to the loopback fake model: forwarded with the saved key,
metered from the provider's own figures exactly once, streamed as they come, refused in the
provider's error format before anything is sent."""

from __future__ import annotations

import json
import time

import pytest

import model_gateway.edge
from agents.models import Agent, RateSource, UsageEvent
from model_gateway.models import Reservation
from tests.infra.asgi import edge_request, edge_stream
from tests.infra.fake_model import ANSWER, USAGE
from tests.infra.http import Reply
from tests.support import wait_until

from .support import PROVIDER_KEY, route_through_gateway

pytestmark = pytest.mark.django_db(transaction=True)

CHAT = "/llm/v1/chat/completions"
# The override's price: 1 USD per million input tokens, 2 per million output = micro-dollars per token.
COST_MICROS = USAGE["prompt_tokens"] * 1 + USAGE["completion_tokens"] * 2


def _body(**fields) -> bytes:
    return json.dumps({"model": "fleet-fake-1", "messages": [{"role": "user", "content": "hi"}], **fields}).encode()


def _gateway_events(agent) -> list[UsageEvent]:
    return list(UsageEvent.objects.filter(agent=agent, rate_source=RateSource.GATEWAY))


def test_a_call_is_sent_with_the_saved_key_and_metered_from_the_providers_figures(routed, fake_provider, settings):
    response = edge_request("POST", CHAT, headers=routed.auth, body=_body())

    assert response.status == 200, response.body
    assert response.json()["choices"][0]["message"]["content"] == ANSWER
    assert fake_provider.authorizations == [f"Bearer {PROVIDER_KEY}"]  # the key, never the agent's token
    sent = fake_provider.requests[0]
    assert sent["max_tokens"] == settings.MODEL_GATEWAY_DEFAULT_MAX_TOKENS  # the reservation's bound, set
    assert response.headers["x-fleet-request-id"]
    [event] = _gateway_events(routed.agent)
    assert (event.input_tokens, event.output_tokens, event.cost_micros) == (
        USAGE["prompt_tokens"], USAGE["completion_tokens"], COST_MICROS)
    assert (event.model, event.provider) == ("fleet-fake-1", "openai-compatible")
    assert event.request_id == f"gw-{response.headers['x-fleet-request-id']}"
    assert not Reservation.objects.exists()
    assert response.headers["content-length"] == str(len(response.body))  # a small answer in one piece


def _completion() -> dict:
    return {"id": "c1", "object": "chat.completion", "model": "fleet-fake-1", "usage": USAGE,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": ANSWER}, "finish_reason": "stop"}]}


def test_an_answer_above_the_whole_answer_size_is_passed_on_as_it_comes(tenancy, http_receiver, priced,
                                                                        monkeypatch):
    monkeypatch.setattr(model_gateway.edge, "WHOLE_ANSWER_BYTES", 100)
    http_receiver.respond_with(200, _completion())
    routed = route_through_gateway(tenancy.agent(status="running"), base_url=http_receiver.url)

    response = edge_request("POST", CHAT, headers=routed.auth, body=_body())

    assert response.status == 200, response.body
    assert response.json() == _completion()
    assert "content-length" not in response.headers  # sent as it came, in chunks
    wait_until(lambda: len(_gateway_events(routed.agent)) == 1, timeout=5)


def test_a_stream_reaches_the_caller_before_the_provider_finishes_and_is_metered_once(routed, fake_provider):
    fake_provider.pause_streams()
    with edge_stream("POST", CHAT, headers=routed.auth, body=_body(stream=True)) as stream:
        first = stream.next_chunk(timeout=10)
        assert stream.status == 200
        assert b"assistant" in first
        assert not _gateway_events(routed.agent)  # the provider has not finished
        fake_provider.finish_streams()
        rest = stream.read_until(b"[DONE]")
    assert ANSWER.encode() in first + rest
    assert fake_provider.requests[0]["stream_options"] == {"include_usage": True}
    wait_until(lambda: _gateway_events(routed.agent), timeout=10)
    [event] = _gateway_events(routed.agent)
    assert (event.input_tokens, event.output_tokens) == (USAGE["prompt_tokens"], USAGE["completion_tokens"])


def test_a_stream_the_caller_leaves_is_still_billed_for_what_the_provider_reports(routed, fake_provider):
    fake_provider.pause_streams()
    with edge_stream("POST", CHAT, headers=routed.auth, body=_body(stream=True)) as stream:
        stream.next_chunk(timeout=10)
        stream.leave()
        time.sleep(0.2)
        fake_provider.finish_streams()
        wait_until(lambda: _gateway_events(routed.agent), timeout=10)
    [event] = _gateway_events(routed.agent)
    assert event.cost_micros == COST_MICROS


@pytest.mark.parametrize(("headers", "status", "code"), [
    ({}, 401, "invalid_credentials"),
    ({"authorization": "Bearer fut_not-a-token"}, 401, "invalid_credentials"),
    ({"x-api-key": "fut_not-a-token"}, 401, "invalid_credentials"),
])
def test_a_call_without_the_agents_token_is_refused_in_the_providers_format(routed, fake_provider, headers, status,
                                                                           code):
    response = edge_request("POST", CHAT, headers={"content-type": "application/json", **headers}, body=_body())
    assert response.status == status
    error = response.json()["error"]
    assert (error["code"], error["type"]) == (code, "authentication_error")
    assert not fake_provider.requests


def test_the_token_in_x_api_key_is_accepted_as_anthropic_clients_send_it(routed, fake_provider):
    response = edge_request("POST", CHAT, headers={"x-api-key": routed.token}, body=_body())
    assert response.status == 200, response.body


def test_another_agents_token_cannot_spend_on_this_agents_key(routed, tenancy, fake_provider):
    other = route_through_gateway(tenancy.agent(status="running"), base_url="http://127.0.0.1:9/v1")
    response = edge_request("POST", CHAT, headers=other.auth, body=_body())
    assert response.status == 502  # sent with its own key to its own provider, never this agent's
    assert not fake_provider.requests
    assert not _gateway_events(routed.agent)


@pytest.mark.parametrize(("change", "status", "code"), [
    ({"model_routing": "direct"}, 403, "gateway_not_enabled"),
    ({"status": "stopped"}, 403, "agent_not_running"),
])
def test_an_agent_not_routed_or_not_running_is_refused(routed, fake_provider, change, status, code):
    Agent.objects.filter(pk=routed.agent.pk).update(**change)
    response = edge_request("POST", CHAT, headers=routed.auth, body=_body())
    assert (response.status, response.json()["error"]["code"]) == (status, code)
    assert not fake_provider.requests


@pytest.mark.parametrize(("body", "status", "code"), [
    (b"not json", 400, "bad_request"),
    (b"[1]", 400, "bad_request"),
    (json.dumps({"messages": []}).encode(), 400, "bad_request"),
    (_body(max_tokens=0), 400, "bad_request"),
    (_body(max_tokens="many"), 400, "bad_request"),
])
def test_a_bad_body_is_refused_before_anything_is_sent(routed, fake_provider, body, status, code):
    response = edge_request("POST", CHAT, headers=routed.auth, body=body)
    assert (response.status, response.json()["error"]["code"]) == (status, code)
    assert not fake_provider.requests


def test_a_route_the_gateway_does_not_serve_is_a_404_and_a_body_too_large_a_413(routed, settings):
    assert edge_request("POST", "/llm/v1/embeddings", headers=routed.auth, body=_body()).status == 404
    settings.MODEL_GATEWAY_MAX_BODY_BYTES = 100
    response = edge_request("POST", CHAT, headers=routed.auth, body=_body(padding="x" * 200))
    assert (response.status, response.json()["error"]["code"]) == (413, "payload_too_large")


def test_a_provider_error_is_passed_through_and_sent_once(tenancy, http_receiver, priced):
    http_receiver.respond_with(500, {"error": {"message": "overloaded", "type": "server_error"}})
    routed = route_through_gateway(tenancy.agent(status="running"), base_url=http_receiver.url)
    response = edge_request("POST", CHAT, headers=routed.auth, body=_body())
    assert response.status == 500
    assert response.json()["error"]["message"] == "overloaded"
    time.sleep(0.3)
    assert len(http_receiver.requests) == 1  # never sent twice
    assert not _gateway_events(routed.agent)
    wait_until(lambda: not Reservation.objects.exists(), timeout=5)


def test_an_unreachable_provider_is_a_502_in_the_providers_format(tenancy, priced):
    routed = route_through_gateway(tenancy.agent(status="running"), base_url="http://127.0.0.1:9/v1")
    response = edge_request("POST", CHAT, headers=routed.auth, body=_body())
    assert (response.status, response.json()["error"]["code"]) == (502, "provider_unreachable")
    assert PROVIDER_KEY not in response.body.decode()


def test_a_provider_address_no_longer_allowed_is_refused_at_the_next_call(routed, fake_provider, settings):
    """The checked address is kept a few seconds, but only under the outbound policy it was checked by."""
    assert edge_request("POST", CHAT, headers=routed.auth, body=_body()).status == 200
    settings.OUTBOUND_ALLOWED_HOSTS = []  # loopback is refused again
    response = edge_request("POST", CHAT, headers=routed.auth, body=_body())
    assert (response.status, response.json()["error"]["code"]) == (502, "provider_unreachable")
    assert "refused" in response.json()["error"]["message"]
    assert len(fake_provider.requests) == 1


def test_an_agent_without_a_model_is_told_so(routed, fake_provider):
    routed.agent.llm_model.delete()
    response = edge_request("POST", CHAT, headers=routed.auth, body=_body())
    assert (response.status, response.json()["error"]["code"]) == (409, "no_model")


def test_models_are_listed_by_the_provider(routed, fake_provider):
    response = edge_request("GET", "/llm/v1/models", headers=routed.auth)
    assert response.status == 200, response.body
    assert [m["id"] for m in response.json()["data"]] == [fake_provider.model_id]


def test_the_anthropic_format_is_metered_from_message_start_and_the_last_message_delta(tenancy, http_receiver, priced):
    events = [
        {"type": "message_start", "message": {"id": "msg_1", "model": "fleet-fake-1",
                                              "usage": {"input_tokens": 40, "cache_read_input_tokens": 10,
                                                        "output_tokens": 1}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 25}},
        {"type": "message_stop"},
    ]
    stream = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    http_receiver.route("/v1/messages", lambda request: _sse(stream), method="POST")
    routed = route_through_gateway(tenancy.agent(status="running"), base_url=http_receiver.url_for("/v1"),
                                   provider="anthropic")
    response = edge_request("POST", "/llm/v1/messages",
                            headers={"x-api-key": routed.token, "anthropic-version": "2023-06-01"},
                            body=_body(stream=True, max_tokens=100))
    assert response.status == 200, response.body
    assert b"Hello" in response.body
    sent = http_receiver.requests[0]
    assert sent.header("x-api-key") == PROVIDER_KEY and sent.header("anthropic-version") == "2023-06-01"
    wait_until(lambda: _gateway_events(routed.agent), timeout=10)
    [event] = _gateway_events(routed.agent)
    assert (event.input_tokens, event.output_tokens) == (50, 25)


def test_an_openai_format_route_the_provider_lacks_is_refused(tenancy, http_receiver, priced):
    routed = route_through_gateway(tenancy.agent(status="running"), base_url=http_receiver.url, provider="anthropic")
    response = edge_request("POST", "/llm/v1/responses", headers=routed.auth, body=_body())
    assert (response.status, response.json()["error"]["code"]) == (400, "unsupported_format")
    assert not http_receiver.requests


def test_the_responses_format_is_metered_from_its_usage(tenancy, http_receiver, priced):
    http_receiver.route("/v1/responses", {"id": "resp_1", "object": "response", "output": [],
                                          "usage": {"input_tokens": 70, "output_tokens": 12, "total_tokens": 82}},
                        method="POST")
    routed = route_through_gateway(tenancy.agent(status="running"), base_url=http_receiver.url_for("/v1"),
                                   provider="openai")
    response = edge_request("POST", "/llm/v1/responses", headers=routed.auth,
                            body=json.dumps({"model": "fleet-fake-1", "input": "hi"}).encode())
    assert response.status == 200, response.body
    assert http_receiver.requests[0].json()["max_output_tokens"] > 0
    [event] = _gateway_events(routed.agent)
    assert (event.input_tokens, event.output_tokens, event.cost_micros) == (70, 12, 70 + 24)


def _sse(text: str) -> Reply:
    return Reply(200, text, {"Content-Type": "text/event-stream"})
