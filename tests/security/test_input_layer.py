"""Defect 9: one input layer refuses, with 400 and the error body, what no field can hold:
numbers with hundreds of digits, date-times at the calendar's edge with an offset, NUL
characters and deeply nested JSON, on every JSON route, unauthenticated login included."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db

HUGE = "9" * 300


def post_raw(client, url, text, method="post"):
    return getattr(client, method)(url, data=text, content_type="application/json")


def assert_refused(response):
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "validation_error" and body["error"]


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("text", [
    f'{{"email": "a@b.co", "password": {HUGE}}}',
    f'{{"email": "a@b.co", "password": 1.{HUGE}}}',
    '{"email": "a@b.co", "password": 1e999}',
    '{"email": "a@b.co", "password": NaN}',
    '{"email": "a\\u0000@b.co", "password": "xxxxxxxxx"}',
    '{"email\\u0000": 1}',
    '{"email": ' + nested(100) + "}",
    nested(100_000),
])
def test_the_unauthenticated_login_refuses_what_no_field_holds(text):
    assert_refused(post_raw(APIClient(), "/api/auth/login", text))


@pytest.mark.parametrize("occurred_at", ["9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+05:00"])
def test_usage_at_the_calendars_edge_with_an_offset_is_refused(tenancy, occurred_at):
    agent = tenancy.agent(owner=tenancy.editor)
    event = {"request_id": "r1", "model": "m", "provider": "p", "input_tokens": 1, "output_tokens": 1,
             "occurred_at": occurred_at}

    response = tenancy.client("editor").post(f"/api/agents/{agent.id}/usage", {"events": [event]}, format="json")

    assert_refused(response)


@pytest.mark.parametrize("field", ["input_tokens", "output_tokens", "cost_usd"])
def test_usage_numbers_with_hundreds_of_digits_are_refused(tenancy, field):
    agent = tenancy.agent(owner=tenancy.editor)
    event = ('{"request_id": "r1", "model": "m", "provider": "p", "input_tokens": 1, "output_tokens": 1, '
             f'"{field}": {HUGE}}}').replace(f'"{field}": 1, ', "", 1)

    response = post_raw(tenancy.client("editor"), f"/api/agents/{agent.id}/usage", '{"events": [' + event + "]}")

    assert_refused(response)


@pytest.mark.parametrize(("url", "text"), [
    ("/api/workspaces", '{"name": "a\\u0000b"}'),
    ("/api/agents/deploy", f'{{"name": "x", "ram_mb": {HUGE}}}'),
    ("/api/agents/deploy", '{"name": ' + nested(200) + "}"),
])
def test_session_routes_refuse_them_too(tenancy, url, text):
    assert_refused(post_raw(tenancy.client("owner"), url, text))


def test_a_nul_in_the_query_string_is_refused(tenancy):
    response = tenancy.client("owner").get("/api/workspaces/cost?period_start=2026-01-01%00&period_end=2026-01-02")

    assert_refused(response)


def test_ordinary_bodies_still_pass(tenancy):
    response = tenancy.client("owner").post("/api/workspaces", {"name": "fine", "n": [[1, 2.5e3]]}, format="json")

    assert response.status_code == 201


@pytest.mark.parametrize("pct", [1e30, -1e30, 1e300])
def test_a_huge_soft_threshold_is_a_400_not_a_500(tenancy, pct):
    # Found by the schema fuzz: quantizing it overflowed Decimal's precision.
    agent = tenancy.agent(owner=tenancy.editor)

    response = tenancy.client("editor").put(f"/api/agents/{agent.id}/budget",
                                            {"period": "daily", "limit_usd": 5, "soft_threshold_pct": pct},
                                            format="json")

    assert (response.status_code, response.json()["code"]) == (400, "validation_error")
