"""A call of a token whose last call this process reserved for is reserved in the round trip
that reads its caller (model_gateway/ahead.py). The read decides: whatever it does not confirm
leaves no reservation behind, and the call is answered as it would have been without it."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal

import pytest

from agents.gateway.tokens import usage_token_digest
from agents.models import Agent, ModelRate
from fleet.errors import FleetError
from fleet.models import Event
from llm.models import ProviderKey
from model_gateway import ahead
from model_gateway.admission import admit
from model_gateway.models import GatewayLimits, Reservation
from model_gateway.reservations import reserve_with_read
from model_gateway.wire import ROUTES
from tests.factories.agents import make_budget

pytestmark = pytest.mark.django_db

CHAT = ROUTES[("POST", "/chat/completions")]


def _body(**fields) -> bytes:
    return json.dumps({"model": "fleet-fake-1", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 50,
                       **fields}).encode()


def _admit(routed, **fields):
    return admit(route=CHAT, token=routed.token, raw_body=_body(**fields), sent_headers={})


def _refusal(routed, **fields) -> str:
    with pytest.raises(FleetError) as refused:
        _admit(routed, **fields)
    return refused.value.code


@pytest.fixture
def reserved_ahead(monkeypatch):
    """The request ids of the reservations made with the caller's read, in order."""
    made = []

    def spy(read, **kwargs):
        made.append(kwargs["request_id"])
        return reserve_with_read(read, **kwargs)

    monkeypatch.setattr(ahead, "reserve_with_read", spy)
    return made


def test_the_next_call_of_an_agent_with_a_budget_is_reserved_with_its_read(routed, reserved_ahead):
    make_budget(routed.agent, limit_usd=10)

    first, second = _admit(routed), _admit(routed)

    assert reserved_ahead == [second.request_id]  # the first call's was made after its read
    assert first.reserved_micros == second.reserved_micros > 0
    assert set(Reservation.objects.values_list("pk", flat=True)) == {first.request_id, second.request_id}


def test_an_agent_without_a_budget_is_not_reserved_for(routed, reserved_ahead):
    assert _admit(routed).reserved_micros == 0
    assert _admit(routed).reserved_micros == 0

    assert reserved_ahead == []
    assert not Reservation.objects.exists()


def test_a_token_replaced_since_its_last_call_is_refused_and_holds_no_room(routed, reserved_ahead):
    make_budget(routed.agent, limit_usd=10)
    kept = _admit(routed)
    Agent.objects.filter(pk=routed.agent.pk).update(usage_token_digest=usage_token_digest("another-token-0123456789"))

    assert _refusal(routed) == "invalid_credentials"

    assert len(reserved_ahead) == 1
    assert list(Reservation.objects.values_list("pk", flat=True)) == [kept.request_id]


@pytest.mark.parametrize("change, code", [
    (lambda agent: GatewayLimits.objects.create(agent=agent, allowed_models=["fleet-fake-2"]), "model_not_allowed"),
    (lambda agent: Agent.objects.filter(pk=agent.pk).update(status="stopped"), "agent_not_running"),
])
def test_a_call_refused_before_its_budgets_are_looked_at_holds_no_room(routed, reserved_ahead, change, code):
    make_budget(routed.agent, limit_usd=10)
    kept = _admit(routed)
    change(routed.agent)

    assert _refusal(routed) == code

    assert len(reserved_ahead) == 1
    assert list(Reservation.objects.values_list("pk", flat=True)) == [kept.request_id]


def test_an_agent_whose_budgets_went_is_admitted_without_a_reservation_and_forgotten(routed, reserved_ahead):
    make_budget(routed.agent, limit_usd=10)
    kept = _admit(routed)
    routed.agent.budgets.all().delete()

    assert _admit(routed).reserved_micros == 0
    assert _admit(routed).reserved_micros == 0

    assert len(reserved_ahead) == 1  # the third call is not reserved ahead any more
    assert list(Reservation.objects.values_list("pk", flat=True)) == [kept.request_id]


def test_a_key_of_another_provider_is_reserved_again_at_its_price(routed, reserved_ahead):
    make_budget(routed.agent, limit_usd=10)
    _admit(routed)
    Reservation.objects.all().delete()
    # The same model at another provider's override, twice the price: the worst case reserved
    # ahead (at the remembered provider's) is not this call's.
    ProviderKey.objects.filter(pk=routed.key.pk).update(provider="openai")
    ModelRate.objects.create(model="fleet-fake-1", provider="openai", input_usd_per_mtok=Decimal(2),
                             output_usd_per_mtok=Decimal(4), effective_from=date(2020, 1, 1))

    admitted = _admit(routed)

    assert len(reserved_ahead) == 1 and reserved_ahead[0] != admitted.request_id  # not kept
    stored = Reservation.objects.get()
    assert (stored.pk, stored.worst_micros) == (admitted.request_id, admitted.reserved_micros)
    assert admitted.reserved_micros == 2 * (len(_body()) + 50 * 2)


def test_a_call_reserved_ahead_past_its_cap_is_refused_with_the_budget_event(routed, reserved_ahead):
    make_budget(routed.agent, limit_usd=0.000300)  # 300 micro-dollars: one call of ~200 fits
    kept = _admit(routed)

    assert _refusal(routed) == "budget_exceeded"

    assert len(reserved_ahead) == 1
    assert list(Reservation.objects.values_list("pk", flat=True)) == [kept.request_id]
    assert Event.objects.filter(kind="agent.budget_exceeded", agent_id=routed.agent.pk).count() == 1
