"""The console: the agent page's model gateway card (routing, limits, the last day's calls and
refusals) and the limits form, which stores through the route's service and names its refusals."""

from __future__ import annotations

import pytest

from agents.console.page import PageSection, page_sections, register_page_section, unregister_page_section
from agents.models import Agent, ModelRouting, RateSource, UsageEvent
from llm.services import key_create
from model_gateway.models import GatewayLimits
from model_gateway.traffic import FORWARDED, traffic_count

pytestmark = pytest.mark.django_db


def test_the_agent_page_shows_the_gateway_card_with_calls_spend_and_refusals(console, tenancy):
    agent = tenancy.agent(model_routing=ModelRouting.GATEWAY)
    traffic_count(agent_id=agent.pk, outcome=FORWARDED)
    traffic_count(agent_id=agent.pk, outcome="budget_exceeded")
    UsageEvent.objects.create(agent=agent, request_id="gw-1", model="m", provider="openai", input_tokens=120,
                              output_tokens=30, cost_micros=180, rate_source=RateSource.GATEWAY,
                              occurred_at=agent.created_at, received_at=agent.created_at)
    page = console.get(f"/admin/agents/agent/{agent.pk}/change/").content.decode()
    assert 'id="agent-model-gateway"' in page and "go through Fleet" in page
    assert "1 calls, 120 input and" in page and "budget_exceeded 1" in page
    assert f"/admin/model_gateway/gatewaylimits/add/?agent={agent.pk}" in page


def test_the_limits_form_stores_through_the_service_and_names_bad_fields(console, tenancy):
    agent = tenancy.agent()
    bad = console.post("/admin/model_gateway/gatewaylimits/add/", {
        "agent": str(agent.pk), "requests_per_minute": "60", "tokens_per_minute": "", "allowed_models": '["a b"]'})
    assert bad.status_code == 200
    assert "Up to 50 model names" in bad.content.decode()
    assert not GatewayLimits.objects.exists()
    good = console.post("/admin/model_gateway/gatewaylimits/add/", {
        "agent": str(agent.pk), "requests_per_minute": "60", "tokens_per_minute": "", "allowed_models": '["m-1"]'})
    assert good.status_code == 302, good.content.decode()[-2000:]
    row = GatewayLimits.objects.get(agent=agent)
    assert (row.requests_per_minute, row.tokens_per_minute, row.allowed_models) == (60, None, ["m-1"])
    page = console.get(f"/admin/agents/agent/{agent.pk}/change/").content.decode()
    assert "60 calls a minute" in page and "models: m-1" in page


def test_a_card_that_fails_is_left_out_and_the_page_still_answers(tenancy):
    def broken(agent):
        raise RuntimeError("boom")

    register_page_section("broken-test-card", PageSection("nowhere.html", broken))
    try:
        cards = page_sections(tenancy.agent())
    finally:
        unregister_page_section("broken-test-card")
    shown = [card["template"] for card in cards]
    assert "nowhere.html" not in shown and "admin/model_gateway/agent_traffic.html" in shown


def test_the_model_form_routes_an_agents_calls_through_fleet(console, platform_admin, tenancy):
    agent = tenancy.agent()
    key = key_create(provider="openai", label="mine", api_key="sk-console-routing-0123", base_url=None,
                     created_by=platform_admin, user=platform_admin)
    saved = console.post(f"/admin/agents/agent/{agent.pk}/model/", {
        "model_key": str(key.pk), "model_name": "gpt-4o-mini", "model_routing": "gateway"})
    assert saved.status_code == 302
    agent.refresh_from_db()
    assert agent.model_routing == ModelRouting.GATEWAY
    assert 'value="gateway" selected' in console.get(f"/admin/agents/agent/{agent.pk}/model/").content.decode()


def test_a_console_deploy_chooses_the_routing(console, tenancy):
    deployed = console.post("/admin/agents/agent/add/", {"name": "through-fleet", "model_routing": "gateway"})
    assert deployed.status_code == 302, deployed.content.decode()[-1500:]
    assert Agent.objects.get(name="through-fleet").model_routing == ModelRouting.GATEWAY
