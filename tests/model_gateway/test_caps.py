"""Hard caps before the spend: a call whose worst case cannot fit under a cap is refused with 402
before the provider sees it, concurrent calls cannot together cross it, and calls and tokens per
minute and the model allowlist are kept."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from agents.models import RateSource, UsageEvent
from fleet.errors import FleetError
from fleet.models import Event
from model_gateway.admission import admit
from model_gateway.models import GatewayLimits, Reservation
from model_gateway.wire import ROUTES
from tests.factories.agents import make_budget
from tests.infra.asgi import edge_request
from tests.infra.fake_model import USAGE
from tests.support import wait_until

from .support import route_through_gateway

pytestmark = pytest.mark.django_db(transaction=True)

CHAT = "/llm/v1/chat/completions"
COST_MICROS = USAGE["prompt_tokens"] + USAGE["completion_tokens"] * 2  # at 1 and 2 USD per million


def _body(**fields) -> bytes:
    return json.dumps({"model": "fleet-fake-1", "messages": [{"role": "user", "content": "hi"}], **fields}).encode()


def _spent(agent) -> int:
    return sum(UsageEvent.objects.filter(agent=agent, rate_source=RateSource.GATEWAY)
               .values_list("cost_micros", flat=True))


def test_a_call_that_could_cross_a_hard_cap_is_refused_before_the_provider_sees_it(routed, fake_provider):
    make_budget(routed.agent, limit_usd=0.001)  # 1,000 micro-dollars; the default bound's worst case is ~16,400
    refused = edge_request("POST", CHAT, headers=routed.auth, body=_body())
    assert refused.status == 402
    error = refused.json()["error"]
    assert (error["code"], error["type"]) == ("budget_exceeded", "insufficient_quota")
    assert not fake_provider.requests
    events = Event.objects.filter(kind="agent.budget_exceeded", agent_id=routed.agent.pk)
    assert events.count() == 1 and events.get().data["refusedAt"] == "gateway"

    # A call bounded to fit is sent; a second refusal in the period emits no second event.
    assert edge_request("POST", CHAT, headers=routed.auth, body=_body(max_tokens=100)).status == 200
    assert edge_request("POST", CHAT, headers=routed.auth, body=_body()).status == 402
    assert events.count() == 1
    assert _spent(routed.agent) == COST_MICROS


def test_the_refusal_names_the_budget_with_the_least_room_and_what_it_has_left(routed, fake_provider):
    make_budget(routed.agent, period="monthly", limit_usd=1)  # plenty of room
    make_budget(routed.agent, period="daily", limit_usd=0.01)  # 10,000 micro-dollars: too little
    refused = edge_request("POST", CHAT, headers=routed.auth, body=_body())
    assert refused.status == 402
    message = refused.json()["error"]["message"]
    assert "daily budget has $0.01 left of $0.01" in message, message
    assert not Reservation.objects.exists() and not fake_provider.requests


def test_the_anthropic_format_gets_its_own_error_shape(routed, fake_provider, tenancy, http_receiver):
    anthropic = route_through_gateway(tenancy.agent(status="running"), base_url=http_receiver.url,
                                      provider="anthropic")
    make_budget(anthropic.agent, limit_usd=0.001)
    response = edge_request("POST", "/llm/v1/messages", headers={"x-api-key": anthropic.token},
                            body=_body(max_tokens=4096))
    assert response.status == 402
    assert response.json() == {"type": "error", "error": {"type": "billing_error", "code": "budget_exceeded",
                                                          "message": response.json()["error"]["message"]}}
    assert not http_receiver.requests


def test_ten_concurrent_calls_never_together_cross_the_cap(routed, fake_provider):
    """Each call reserves its body's bytes and 200 output tokens (~550 micro-dollars): three fit
    under 2,000 while the provider holds them, the other seven are refused, and the spend after
    is the three calls' real cost."""
    make_budget(routed.agent, limit_usd=0.002)
    body = _body(max_tokens=200)
    worst = len(body) + 200 * 2
    fits = 2000 // worst
    fake_provider.hold()
    barrier = threading.Barrier(10)

    def call(_):
        barrier.wait()
        try:
            return admit(route=ROUTES[("POST", "/chat/completions")], token=routed.token, raw_body=body,
                         sent_headers={})
        except FleetError as error:
            return error.code
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=10) as pool:
        outcomes = list(pool.map(call, range(10)))
    admitted = [o for o in outcomes if not isinstance(o, str)]
    assert len(admitted) == fits
    assert sorted(o for o in outcomes if isinstance(o, str)) == ["budget_exceeded"] * (10 - fits)
    assert Reservation.objects.filter(agent=routed.agent).count() == fits
    fake_provider.release()


def test_ten_concurrent_calls_through_the_edge_spend_at_most_the_cap(routed, fake_provider):
    make_budget(routed.agent, limit_usd=0.002)
    fake_provider.hold()
    with ThreadPoolExecutor(max_workers=10) as pool:
        pending = [pool.submit(edge_request, "POST", CHAT, headers=routed.auth, body=_body(max_tokens=200))
                   for _ in range(10)]
        wait_until(lambda: len(fake_provider.requests) + sum(f.done() for f in pending) >= 10, timeout=20)
        fake_provider.release()
        statuses = sorted(f.result().status for f in pending)
    assert statuses.count(200) == len(fake_provider.requests) >= 1
    assert set(statuses) <= {200, 402}
    wait_until(lambda: not Reservation.objects.exists(), timeout=10)
    assert _spent(routed.agent) == statuses.count(200) * COST_MICROS <= 2000


def test_calls_per_minute_are_limited_with_retry_after(routed, fake_provider):
    GatewayLimits.objects.create(agent=routed.agent, requests_per_minute=2)
    assert [edge_request("POST", CHAT, headers=routed.auth, body=_body()).status for _ in range(2)] == [200, 200]
    refused = edge_request("POST", CHAT, headers=routed.auth, body=_body())
    assert (refused.status, refused.json()["error"]["code"]) == (429, "rate_limited")
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert len(fake_provider.requests) == 2


def test_tokens_per_minute_stop_calls_once_the_minute_has_used_them(routed, fake_provider):
    GatewayLimits.objects.create(agent=routed.agent, tokens_per_minute=USAGE["total_tokens"] + 1)
    assert edge_request("POST", CHAT, headers=routed.auth, body=_body()).status == 200
    assert edge_request("POST", CHAT, headers=routed.auth, body=_body()).status == 200  # 150 used: below 151
    refused = edge_request("POST", CHAT, headers=routed.auth, body=_body())
    assert (refused.status, refused.json()["error"]["code"]) == (429, "rate_limited")
    assert "retry-after" in refused.headers


def test_only_allowed_models_are_called_and_listed(routed, fake_provider):
    GatewayLimits.objects.create(agent=routed.agent, allowed_models=["fleet-fake-1", "fleet-fake-2"])
    refused = edge_request("POST", CHAT, headers=routed.auth, body=_body(model="gpt-5"))
    assert (refused.status, refused.json()["error"]["code"]) == (403, "model_not_allowed")
    assert edge_request("POST", CHAT, headers=routed.auth, body=_body()).status == 200
    listed = edge_request("GET", "/llm/v1/models", headers=routed.auth).json()
    assert [m["id"] for m in listed["data"]] == ["fleet-fake-1", "fleet-fake-2"]
    assert len(fake_provider.requests) == 1


def test_the_reservation_bounds_the_largest_output_the_call_asks_for_times_its_choices(routed, fake_provider):
    route = ROUTES[("POST", "/chat/completions")]
    make_budget(routed.agent, limit_usd=1000)
    body = _body(max_tokens=10, max_completion_tokens=300, n=2)
    admission = admit(route=route, token=routed.token, raw_body=body, sent_headers={})
    assert admission.reserved_micros == len(body) * 1 + 300 * 2 * 2  # input bytes at 1, 600 output tokens at 2
    with pytest.raises(FleetError):
        admit(route=route, token=routed.token, raw_body=_body(n=0), sent_headers={})
