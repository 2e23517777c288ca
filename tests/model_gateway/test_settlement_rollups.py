"""Settling the gateway's calls folds their cost into the day and month spend rollups in the
settlement's transaction, once per call however often a settlement is retried."""

from __future__ import annotations

import uuid

import pytest

from agents.models import AgentSpendDay, AgentSpendMonth
from model_gateway.admission import Admission
from model_gateway.settlement import Ended, settle
from model_gateway.traffic import FORWARDED
from model_gateway.wire import Usage
from tests.factories.agents import AgentFactory

from .support import price

pytestmark = pytest.mark.django_db

MODEL = "fleet-settled-1"


def _ended(agent, *, input_tokens: int, output_tokens: int) -> Ended:
    admission = Admission(request_id=uuid.uuid4(), agent_id=agent.pk, provider="openai-compatible", model=MODEL,
                          url="http://127.0.0.1:9/v1/chat/completions", headers={}, body=b"", reserved_micros=0)
    return Ended(admission=admission, usage=Usage(input_tokens, output_tokens), outcome=FORWARDED)


def _spend(model) -> dict:
    return {agent_id: cost for agent_id, cost in model.objects.values_list("agent_id", "cost_micros")}


def test_settled_calls_add_their_cost_to_the_day_and_the_month_once():
    price(MODEL)  # micro-dollars: 1 per input token, 2 per output token
    first, second = AgentFactory(), AgentFactory()
    calls = [_ended(first, input_tokens=100, output_tokens=10), _ended(first, input_tokens=5, output_tokens=1),
             _ended(second, input_tokens=1_000, output_tokens=0)]

    settle(calls)
    settle(calls)  # a retry of the same calls: the request ids are already stored

    expected = {first.pk: 127, second.pk: 1_000}
    assert _spend(AgentSpendDay) == expected
    assert _spend(AgentSpendMonth) == expected
