"""POST /agents/:id/usage: the agent's token or agents:write, idempotency, pricing, rollups."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from agents.gateway.tokens import usage_token_digest, usage_token_for
from agents.models import AgentSpendDay, UsageDaily, UsageEvent
from tests.support import client_for

from .helpers import event

pytestmark = pytest.mark.django_db


@pytest.fixture
def agent(tenancy):
    return tenancy.agent(gateway_token="gateway-secret-for-tests")


@pytest.fixture
def agent_token(agent):
    token = usage_token_for(agent)
    agent.usage_token_digest = usage_token_digest(token)
    agent.save(update_fields=["usage_token_digest"])
    return token


def post(client, agent, events):
    return client.post(f"/api/agents/{agent.id}/usage", {"events": events}, format="json")


def agent_client(token):
    client = client_for()
    client.credentials(HTTP_X_AGENT_TOKEN=token)
    return client


def test_the_agent_reports_usage_with_its_own_token(agent, agent_token):
    response = post(agent_client(agent_token), agent, [event(), event()])

    assert response.status_code == 200, response.content
    assert response.json() == {"accepted": 2, "duplicates": 0}
    assert UsageEvent.objects.filter(agent=agent).count() == 2


def test_a_repeated_post_counts_duplicates_and_stores_nothing_twice(agent, agent_token):
    batch = [event(cost_usd=0.5), event(cost_usd=0.25)]
    client = agent_client(agent_token)
    post(client, agent, batch)

    again = post(client, agent, batch + [event(cost_usd=1)])

    assert again.json() == {"accepted": 1, "duplicates": 2}
    assert UsageEvent.objects.filter(agent=agent).count() == 3
    assert AgentSpendDay.objects.get(agent=agent).cost_micros == 1_750_000


def test_a_request_id_repeated_inside_one_batch_is_a_duplicate(agent, agent_token):
    response = post(agent_client(agent_token), agent, [event(request_id="same"), event(request_id="same")])

    assert response.json() == {"accepted": 1, "duplicates": 1}


def test_events_are_priced_from_the_catalog_when_the_runtime_gives_no_cost(agent, agent_token, clock):
    clock.move_to(datetime(2026, 1, 6, 12, 0, tzinfo=UTC))  # the event's date is within USAGE_MAX_AGE_DAYS
    post(agent_client(agent_token), agent, [event(model="gpt-4o-mini-2024-07-18", input_tokens=1_000_000,
                                                  output_tokens=1_000_000, occurred_at="2026-01-05T10:00:00Z")])

    row = UsageEvent.objects.get(agent=agent)
    assert (row.cost_micros, row.rate_source) == (750_000, "catalog")  # 0.15 + 0.60 USD


def test_a_runtime_cost_is_kept_as_micro_dollars(agent, agent_token):
    post(agent_client(agent_token), agent, [event(cost_usd=0.0123456)])

    row = UsageEvent.objects.get(agent=agent)
    assert (row.cost_micros, row.rate_source) == (12_346, "runtime")


def test_an_unknown_model_is_unpriced(agent, agent_token):
    post(agent_client(agent_token), agent, [event(model="home-made-llm")])

    row = UsageEvent.objects.get(agent=agent)
    assert (row.cost_micros, row.rate_source) == (0, "unpriced")


def test_accepted_events_are_rolled_up_per_day_and_model(agent, agent_token, clock):
    clock.move_to(datetime(2026, 1, 6, 12, 0, tzinfo=UTC))  # the events' dates are within USAGE_MAX_AGE_DAYS
    post(agent_client(agent_token), agent, [
        event(occurred_at="2026-01-05T10:00:00Z", cost_usd=1, input_tokens=10, output_tokens=1),
        event(occurred_at="2026-01-05T23:59:59Z", cost_usd=2, input_tokens=20, output_tokens=2),
        event(occurred_at="2026-01-06T00:00:00Z", cost_usd=4, input_tokens=40, output_tokens=4),
        event(occurred_at="2026-01-06T00:00:00+02:00", cost_usd=8, input_tokens=80, output_tokens=8),
    ])

    daily = {(str(d.day), d.input_tokens, d.output_tokens, d.cost_micros, d.events)
             for d in UsageDaily.objects.filter(agent=agent)}
    assert daily == {("2026-01-05", 110, 11, 11_000_000, 3), ("2026-01-06", 40, 4, 4_000_000, 1)}
    spend = dict(AgentSpendDay.objects.filter(agent=agent).values_list("day__day", "cost_micros"))
    assert spend == {5: 11_000_000, 6: 4_000_000}


def test_an_occurred_at_in_the_future_counts_as_now(agent, agent_token):
    post(agent_client(agent_token), agent, [event(occurred_at="2999-01-01T00:00:00Z")])

    assert UsageEvent.objects.get(agent=agent).occurred_at.year < 2999


def test_an_occurred_at_older_than_the_window_counts_as_now(agent, agent_token, clock, settings):
    settings.USAGE_MAX_AGE_DAYS = 35
    clock.move_to(datetime(2026, 11, 28, 12, 0, tzinfo=UTC))
    post(agent_client(agent_token), agent, [
        event(request_id="ancient", occurred_at="2020-01-01T00:00:00Z", input_tokens=1_000_000, output_tokens=0),
        event(request_id="old", occurred_at="2026-10-23T11:00:00Z", cost_usd=1),  # 36 days back
        event(request_id="recent", occurred_at="2026-10-25T12:00:00Z", cost_usd=2),  # 34 days back
    ])

    stored = dict(UsageEvent.objects.filter(agent=agent).values_list("request_id", "occurred_at"))
    assert stored["ancient"] == stored["old"] == datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
    assert stored["recent"] == datetime(2026, 10, 25, 12, 0, tzinfo=UTC)
    ancient = UsageEvent.objects.get(agent=agent, request_id="ancient")
    assert (ancient.rate_source, ancient.cost_micros > 0) == ("catalog", True)  # today's price, not 0
    spend = dict(AgentSpendDay.objects.filter(agent=agent).values_list("day", "cost_micros"))
    assert spend[date(2026, 11, 28)] == ancient.cost_micros + 1_000_000
    assert spend[date(2026, 10, 25)] == 2_000_000


def test_a_wrong_agent_token_is_401(agent, agent_token):
    response = post(agent_client(agent_token + "x"), agent, [event()])

    assert (response.status_code, response.json()["code"]) == (401, "invalid_credentials")
    assert not UsageEvent.objects.exists()


def test_another_agents_token_is_401(tenancy, agent, agent_token):
    other = tenancy.agent(gateway_token="another-gateway-secret")

    response = post(agent_client(agent_token), other, [event()])

    assert response.status_code == 401


def test_an_agent_without_a_stored_digest_refuses_every_token(agent):
    response = post(agent_client(usage_token_for(agent)), agent, [event()])

    assert response.status_code == 401


def test_a_token_for_an_unknown_agent_is_401_not_404(agent_token):
    response = agent_client(agent_token).post(
        "/api/agents/00000000-0000-0000-0000-000000000000/usage", {"events": [event()]}, format="json"
    )

    assert response.status_code == 401


def test_an_agent_token_beside_a_user_credential_is_conflicting(tenancy, agent, agent_token):
    client = client_for(tenancy.agent_owner)
    client.credentials(HTTP_X_AGENT_TOKEN=agent_token, HTTP_AUTHORIZATION=client._credentials["HTTP_AUTHORIZATION"])

    response = post(client, agent, [event()])

    assert (response.status_code, response.json()["code"]) == (400, "conflicting_auth")


@pytest.mark.parametrize(
    ("who", "status"),
    [
        ("agent_owner", 200),
        ("owner", 200),
        ("admin", 200),
        ("editor", 200),
        ("platform_admin", 200),
        ("key:agents:write", 200),
        ("viewer", 403),
        ("key:agents:read", 403),
        ("key:workspaces:read", 403),
        ("outsider", 404),
        ("other-key", 404),
        ("anonymous", 401),
    ],
)
def test_who_may_report_usage(tenancy, agent, who, status):
    response = post(tenancy.client(who), agent, [event()])

    assert response.status_code == status, response.content
    assert UsageEvent.objects.filter(agent=agent).exists() == (status == 200)
