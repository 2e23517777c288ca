"""POST /agents/:id/usage refuses bad input with a 400 naming the field, and stores nothing."""

from __future__ import annotations

import pytest

from agents.models import UsageEvent
from tests.support import client_for

from .helpers import event

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(tenancy):
    return client_for(tenancy.agent_owner)


def post(client, agent, body):
    return client.post(f"/api/agents/{agent.id}/usage", body, format="json")


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"request_id": ""}, "request_id", "blank"),
        ({"request_id": "x" * 201}, "request_id", "200"),
        ({"request_id": 7}, "request_id", "string"),
        ({"model": None}, "model", "string"),
        ({"model": "m" * 201}, "model", "200"),
        ({"provider": ""}, "provider", "blank"),
        ({"provider": "p" * 101}, "provider", "100"),
        ({"input_tokens": -1}, "input_tokens", "negative"),
        ({"input_tokens": 1.5}, "input_tokens", "whole"),
        ({"input_tokens": "10"}, "input_tokens", "whole"),
        ({"output_tokens": True}, "output_tokens", "whole"),
        ({"output_tokens": 10**13}, "output_tokens", "At most"),
        ({"cost_usd": -0.01}, "cost_usd", "negative"),
        ({"cost_usd": "0.5"}, "cost_usd", "number"),
        ({"cost_usd": False}, "cost_usd", "number"),
        ({"occurred_at": "yesterday"}, "occurred_at", "ISO 8601"),
        ({"occurred_at": 1700000000}, "occurred_at", "ISO 8601"),
        ({"occurred_at": "2026-02-30T10:00:00Z"}, "occurred_at", "ISO 8601"),
    ],
)
def test_each_bad_field_is_named(client, agent, fields, field, message):
    response = post(client, agent, {"events": [event(), event(**fields)]})

    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "validation_error"
    assert message in body["fields"][f"events.1.{field}"][0]
    assert not UsageEvent.objects.exists()


def test_a_nul_character_is_refused_by_the_input_layer(client, agent):
    response = post(client, agent, {"events": [event(), event(request_id="a\x00b")]})

    assert (response.status_code, response.json()["code"]) == (400, "validation_error")
    assert not UsageEvent.objects.exists()


@pytest.mark.parametrize("missing", ["request_id", "model", "provider", "input_tokens", "output_tokens"])
def test_each_required_field_is_required(client, agent, missing):
    bad = event()
    del bad[missing]

    response = post(client, agent, {"events": [bad]})

    assert response.status_code == 400
    assert response.json()["fields"][f"events.0.{missing}"] == ["This field is required."]


@pytest.mark.parametrize(
    "body", [{}, {"events": "x"}, {"events": []}, {"events": [event()] * 0 + [None]}, [event()]]
)
def test_the_body_must_be_an_object_with_events(client, agent, body):
    response = post(client, agent, body)

    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"


def test_at_most_1000_events_per_request(client, agent):
    response = post(client, agent, {"events": [event() for _ in range(1001)]})

    assert response.status_code == 400
    assert "1000" in response.json()["fields"]["events"][0]


def test_1000_events_are_accepted_in_one_request(client, agent):
    response = post(client, agent, {"events": [event() for _ in range(1000)]})

    assert response.json() == {"accepted": 1000, "duplicates": 0}


def test_optional_fields_may_be_null_and_unknown_fields_are_ignored(client, agent):
    response = post(client, agent, {"events": [event(cost_usd=None, occurred_at=None, cache_tokens=5)]})

    assert response.json() == {"accepted": 1, "duplicates": 0}


def test_malformed_json_is_a_400(client, agent):
    response = client.post(f"/api/agents/{agent.id}/usage", "{not json", content_type="application/json")

    assert response.status_code == 400
