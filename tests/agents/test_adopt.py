"""POST /api/agents/adopt: token strength, endpoint checks, keys, billing, and what adopted agents allow."""

from __future__ import annotations

import secrets

import pytest
from django.db import connection

from agents.models import Agent, WorkspaceAgent
from fleet.models import Event
from tests.factories.agents import AgentFactory

pytestmark = pytest.mark.django_db

ADOPT = "/api/agents/adopt"
TOKEN = secrets.token_urlsafe(32)


def adopt(client, **body):
    body.setdefault("name", "outside")
    body.setdefault("runtime_family", "openclaw")
    body.setdefault("gateway_token", TOKEN)
    if "url" not in body and "host" not in body:
        body["host"] = "10.1.2.3"
    return client.post(ADOPT, body, format="json")


def test_it_registers_a_running_external_agent(user_client, user):
    response = adopt(user_client, host="10.1.2.3", port=18789)

    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "running"
    assert (body["deploy_target"], body["execution_target_id"]) == ("external", "external")
    assert TOKEN not in response.content.decode()
    agent = Agent.objects.get(pk=body["id"])
    assert agent.is_external and agent.owner == user
    assert agent.gateway_url == "http://10.1.2.3:18789"
    assert Event.objects.filter(kind="agent.adopted", agent_id=agent.pk).exists()


def test_the_token_is_stored_encrypted(user_client):
    agent_id = adopt(user_client).json()["id"]

    with connection.cursor() as cursor:
        cursor.execute("SELECT gateway_token FROM agents_agent WHERE id = %s", [agent_id])
        stored = cursor.fetchone()[0]
    assert TOKEN not in stored
    assert Agent.objects.get(pk=agent_id).gateway_token == TOKEN


def test_a_url_is_normalised_with_its_port(user_client):
    agent_id = adopt(user_client, url="https://10.9.8.7:19001/").json()["id"]

    assert Agent.objects.get(pk=agent_id).gateway_url == "https://10.9.8.7:19001"


@pytest.mark.parametrize(
    "token",
    [
        "",
        secrets.token_hex(15),  # 30 characters
        "a" * 40,
        "abcd" * 10,
        "Xy9!Xy9!" * 5,
        "aabbaabbccaabbaabbccaabbaabbccaabb",
        secrets.token_urlsafe(24)[:20] + " " + secrets.token_urlsafe(24)[:20],
        "abcdefghijklmnopqrstuvwxyz0123456789",
    ],
    # Fixed ids: random values in them would differ between the xdist workers' collections.
    ids=["empty", "random-30-chars", "one-letter", "repeated-4", "repeated-8", "few-letters", "with-a-space",
         "alphabet"],
)
def test_weak_tokens_are_refused(user_client, token):
    response = adopt(user_client, gateway_token=token)

    assert response.status_code == 400
    assert "gateway_token" in response.json()["fields"]
    assert not Agent.objects.exists()


@pytest.mark.parametrize("token", [secrets.token_hex(16), secrets.token_urlsafe(32), secrets.token_hex(32)],
                         ids=["hex-16", "urlsafe-32", "hex-32"])
def test_random_tokens_are_accepted(user_client, token):
    assert adopt(user_client, gateway_token=token).status_code == 201


def test_an_invalid_runtime_family_is_400(user_client):
    response = adopt(user_client, runtime_family="llama")

    assert (response.status_code, list(response.json()["fields"])) == (400, ["runtime_family"])


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"host": "10.1.2.3", "port": 8080}, "port"),
        ({"host": "10.1.2.3", "port": 70000}, "port"),
        ({"host": "10.1.2.3", "port": "x"}, "port"),
        ({"url": "http://10.1.2.3:8080"}, "url"),
        ({"url": "http://10.1.2.3"}, "url"),  # port 80 is not a gateway port
        ({"url": "ftp://10.1.2.3:18789"}, "url"),
        ({"url": "http://user:pw@10.1.2.3:18789"}, "url"),
        ({"url": "not a url"}, "url"),
        ({"host": "http://10.1.2.3"}, "host"),
        ({"host": "10.1.2.3", "url": "http://10.1.2.3:18789"}, "url"),
        ({"host": "127.0.0.1"}, "host"),  # loopback is never an adoptable endpoint
        ({"host": "169.254.169.254"}, "host"),  # metadata
        ({"url": "http://[::1]:18789"}, "url"),
        ({"url": "http://localhost:18789"}, "url"),  # a name resolving to loopback
        ({"host": "bad_host!"}, "host"),
    ],
)
def test_invalid_ports_and_unsafe_endpoints_are_400(user_client, body, field):
    response = adopt(user_client, **body)

    assert response.status_code == 400, response.content
    assert field in response.json()["fields"]


def test_paas_accepts_only_public_endpoints(user_client, settings):
    settings.PLATFORM_MODE = "paas"

    private = adopt(user_client, host="10.1.2.3")
    public = adopt(user_client, host="8.8.8.8", port=18789)

    assert private.status_code == 400
    assert public.status_code == 201


def test_the_allowed_ports_come_from_settings(user_client, settings):
    settings.GATEWAY_ALLOWED_PORTS = "8443"

    assert adopt(user_client, host="10.1.2.3", port=8443).status_code == 201
    assert adopt(user_client, host="10.1.2.3", port=18789).status_code == 400


def test_billing_limits_apply_to_adoption(user_client, user, settings):
    settings.PLATFORM_MODE = "paas"
    settings.PAAS_PLAN_LIMITS = {"free": 1}
    AgentFactory(owner=user)

    response = adopt(user_client, host="8.8.8.8")

    assert (response.status_code, response.json()["code"]) == (402, "billing_limit")


def test_a_key_adoption_is_assigned_to_its_workspace(tenancy):
    response = adopt(tenancy.client("key:agents:write"))

    assert response.status_code == 201
    assert WorkspaceAgent.objects.filter(agent_id=response.json()["id"], workspace=tenancy.workspace).exists()


def test_a_key_without_agents_write_is_403(tenancy):
    response = adopt(tenancy.client("key:agents:read"))

    assert (response.status_code, response.json()["code"]) == (403, "missing_scope")


def test_no_credential_is_401(api_client):
    assert adopt(api_client).status_code == 401


@pytest.mark.parametrize("action", ["start", "stop", "restart", "redeploy"])
def test_lifecycle_actions_on_an_adopted_agent_are_invalid_state(user_client, action):
    agent_id = adopt(user_client).json()["id"]

    response = user_client.post(f"/api/agents/{agent_id}/{action}")

    assert (response.status_code, response.json()["code"]) == (400, "invalid_state")
    assert Agent.objects.get(pk=agent_id).status == "running"


def test_deleting_an_adopted_agent_only_deregisters_it(user_client):
    agent_id = adopt(user_client).json()["id"]

    response = user_client.delete(f"/api/agents/{agent_id}")

    assert response.json() == {"success": True}
    assert not Agent.objects.filter(pk=agent_id).exists()


def test_an_adopted_agent_reads_and_resolves_its_gateway_url(user_client):
    agent_id = adopt(user_client, host="10.1.2.3", port=19005).json()["id"]

    detail = user_client.get(f"/api/agents/{agent_id}").json()
    gateway = user_client.get(f"/api/agents/{agent_id}/gateway-url").json()

    assert detail["status"] == "running"
    assert "gateway_token" not in detail
    # Its UI through the gateway proxy, on an origin of its own; the port it was registered with.
    assert gateway == {"url": f"http://{agent_id}.gw.localhost:8000/", "port": 19005}
