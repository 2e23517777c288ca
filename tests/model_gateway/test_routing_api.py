"""`modelRouting` on deploy and on /agents/:id/model, the gateway's limits
(/agents/:id/model-gateway) and its traffic (/agents/:id/model-gateway/traffic): who may read and
write them, and every bad field."""

from __future__ import annotations

import pytest

from agents.models import Agent, AgentModel
from llm.services import key_create
from model_gateway.models import GatewayLimits
from model_gateway.traffic import FORWARDED, traffic_count

pytestmark = pytest.mark.django_db


def _key(user):
    return key_create(provider="openai", label="k", api_key="sk-routing-0123456789", base_url=None,
                      created_by=user, user=user)


def test_a_deploy_chooses_the_routing_and_takes_the_platform_default_without_one(tenancy, settings):
    client = tenancy.client("owner")
    routed = client.post("/api/agents/deploy", {"name": "routed", "modelRouting": "gateway"}, format="json")
    assert routed.status_code == 201, routed.content
    assert Agent.objects.get(pk=routed.json()["id"]).model_routing == "gateway"
    settings.DEFAULT_MODEL_ROUTING = "gateway"
    default = client.post("/api/agents/deploy", {"name": "default"}, format="json")
    assert Agent.objects.get(pk=default.json()["id"]).model_routing == "gateway"


def test_a_deploy_with_an_unknown_routing_names_it_with_every_other_bad_field(tenancy):
    response = tenancy.client("owner").post("/api/agents/deploy", {"modelRouting": "sideways", "ram_mb": "lots"},
                                            format="json")
    assert response.status_code == 400
    assert set(response.json()["fields"]) >= {"modelRouting", "ram_mb"}
    assert not Agent.objects.filter(owner=tenancy.owner).exists()


def test_the_model_route_sets_and_shows_the_routing_and_keeps_it_when_absent(tenancy):
    agent = tenancy.agent()
    key = _key(tenancy.agent_owner)
    client = tenancy.client("agent_owner")
    set_ = client.put(f"/api/agents/{agent.pk}/model", {"keyId": str(key.pk), "name": "gpt-4o-mini",
                                                        "modelRouting": "gateway"}, format="json")
    assert set_.status_code == 200, set_.content
    assert set_.json()["modelRouting"] == "gateway"
    kept = client.put(f"/api/agents/{agent.pk}/model", {"keyId": str(key.pk), "name": "gpt-4o"}, format="json")
    assert kept.json()["modelRouting"] == "gateway"
    bad = client.put(f"/api/agents/{agent.pk}/model", {"keyId": str(key.pk), "name": "gpt-4o",
                                                       "modelRouting": "both"}, format="json")
    assert (bad.status_code, list(bad.json()["fields"])) == (400, ["modelRouting"])
    assert AgentModel.objects.get(agent=agent).name == "gpt-4o"


LIMITS = {"requestsPerMinute": 60, "tokensPerMinute": 100000, "allowedModels": ["gpt-4o-mini"]}


@pytest.mark.parametrize(("caller", "status"), [
    ("agent_owner", 200), ("editor", 200), ("admin", 200), ("platform_admin", 200), ("key:agents:write", 200),
    ("viewer", 403), ("key:agents:read", 403), ("outsider", 404), ("other-key", 404), ("anonymous", 401),
])
def test_who_may_set_the_gateway_limits(tenancy, caller, status):
    agent = tenancy.agent()
    response = tenancy.client(caller).put(f"/api/agents/{agent.pk}/model-gateway", LIMITS, format="json")
    assert response.status_code == status, response.content
    if status == 200:
        assert response.json() == {"modelRouting": "direct", **LIMITS}
    else:
        assert not GatewayLimits.objects.exists()


@pytest.mark.parametrize(("caller", "status"), [
    ("viewer", 200), ("key:agents:read", 200), ("outsider", 404), ("other-key", 404), ("anonymous", 401),
])
def test_who_may_read_the_limits_and_the_traffic(tenancy, caller, status):
    agent = tenancy.agent()
    client = tenancy.client(caller)
    assert client.get(f"/api/agents/{agent.pk}/model-gateway").status_code == status
    assert client.get(f"/api/agents/{agent.pk}/model-gateway/traffic").status_code == status


def test_bad_limits_are_named_together_and_nothing_is_stored(tenancy):
    agent = tenancy.agent()
    response = tenancy.client("agent_owner").put(f"/api/agents/{agent.pk}/model-gateway", {
        "requestsPerMinute": 0, "tokensPerMinute": "many", "allowedModels": ["has space"], "burst": 3,
    }, format="json")
    assert response.status_code == 400
    assert set(response.json()["fields"]) == {"requestsPerMinute", "tokensPerMinute", "allowedModels", "burst"}
    assert not GatewayLimits.objects.exists()


def test_putting_no_limits_clears_them(tenancy):
    agent = tenancy.agent()
    client = tenancy.client("agent_owner")
    client.put(f"/api/agents/{agent.pk}/model-gateway", LIMITS, format="json")
    cleared = client.put(f"/api/agents/{agent.pk}/model-gateway", {}, format="json")
    assert cleared.json() == {"modelRouting": "direct", "requestsPerMinute": None, "tokensPerMinute": None,
                              "allowedModels": []}


def test_the_traffic_counts_calls_and_refusals_by_hour(tenancy):
    agent = tenancy.agent()
    for outcome in (FORWARDED, FORWARDED, "budget_exceeded"):
        traffic_count(agent_id=agent.pk, outcome=outcome)
    body = tenancy.client("viewer").get(f"/api/agents/{agent.pk}/model-gateway/traffic?hours=2").json()
    assert body["hours"] == 2
    assert body["totals"] == {"calls": 2, "inputTokens": 0, "outputTokens": 0, "costUsd": 0.0,
                              "refusals": {"budget_exceeded": 1}}
    [hour] = body["series"]
    assert (hour["calls"], hour["refusals"]) == (2, {"budget_exceeded": 1})


@pytest.mark.parametrize("hours", ["0", "745", "a", "-1"])
def test_a_bad_window_is_a_400(tenancy, hours):
    agent = tenancy.agent()
    response = tenancy.client("viewer").get(f"/api/agents/{agent.pk}/model-gateway/traffic?hours={hours}")
    assert (response.status_code, list(response.json()["fields"])) == (400, ["hours"])
