"""Who may call the agent's integration routes: viewers read, editors write; keys by scope and
only inside their workspace; others see 404; no credential is 401."""

from __future__ import annotations

import uuid

import pytest

from integrations.models import Integration
from integrations.services import integration_connect
from tests.integrations.support import GITHUB_TOKEN, url

pytestmark = pytest.mark.django_db


@pytest.fixture
def integration(agent):
    # Tavily has no connection test: a test call answers without the network.
    return integration_connect(agent=agent, provider="tavily", config={"api_key": "tvly-secret"})


def call(client, route, agent, integration):
    iid = integration.id
    if route == "list":
        return client.get(url(agent))
    if route == "connect":
        return client.post(url(agent), {"provider": "github", "config": {"token": GITHUB_TOKEN}}, format="json")
    if route == "update":
        return client.patch(url(agent, f"/{iid}"), {"config": {"api_key": "[REDACTED]"}}, format="json")
    if route == "remove":
        return client.delete(url(agent, f"/{iid}"))
    if route == "test":
        return client.post(url(agent, f"/{iid}/test"))
    if route == "sync":
        return client.post(url(agent, "/sync"))
    if route == "oauth-start":
        return client.post(url(agent, "/oauth/twitter/start"), {"clientId": "c", "clientSecret": "s"}, format="json")
    raise AssertionError(route)


WRITES = ["connect", "update", "remove", "test", "sync", "oauth-start"]
# A stopped agent: sync answers 409 agent_not_running once access is granted.
GRANTED = {"list": 200, "connect": 201, "update": 200, "remove": 200, "test": 200, "sync": 409, "oauth-start": 200}


@pytest.mark.parametrize("route", ["list", *WRITES])
@pytest.mark.parametrize("caller", ["editor", "admin", "owner", "key:agents:write"])
def test_editors_and_write_keys_may_call_every_route(tenancy, agent, integration, route, caller):
    response = call(tenancy.client(caller), route, agent, integration)

    assert response.status_code == GRANTED[route], response.content


@pytest.mark.parametrize("caller", ["viewer", "key:agents:read"])
def test_viewers_and_read_keys_read(tenancy, agent, integration, caller):
    response = call(tenancy.client(caller), "list", agent, integration)

    assert response.status_code == 200 and response.json()[0]["config"] == {"api_key": "[REDACTED]"}


@pytest.mark.parametrize("route", WRITES)
@pytest.mark.parametrize(("caller", "code"), [("viewer", "permission_denied"), ("key:agents:read", "missing_scope")])
def test_viewers_and_read_keys_may_not_write(tenancy, agent, integration, route, caller, code):
    response = call(tenancy.client(caller), route, agent, integration)

    assert response.status_code == 403 and response.json()["code"] == code
    assert Integration.objects.get().secrets == '{"api_key": "tvly-secret"}'


@pytest.mark.parametrize("route", ["list", *WRITES])
def test_a_key_without_an_agent_scope_is_refused(tenancy, agent, integration, route):
    response = call(tenancy.client("key:workspaces:read"), route, agent, integration)

    assert response.status_code == 403 and response.json()["code"] == "missing_scope"


@pytest.mark.parametrize("route", ["list", *WRITES])
@pytest.mark.parametrize("caller", ["outsider", "other-key"])
def test_callers_outside_the_agents_workspaces_see_404(tenancy, agent, integration, route, caller):
    response = call(tenancy.client(caller), route, agent, integration)

    assert response.status_code == 404 and response.json()["code"] == "not_found"


@pytest.mark.parametrize("route", ["list", *WRITES])
def test_without_a_credential_every_route_is_401(tenancy, agent, integration, route):
    response = call(tenancy.client("anonymous"), route, agent, integration)

    assert response.status_code == 401 and response.json()["code"] == "not_authenticated"


def test_sync_of_an_agent_that_is_not_running_is_409(tenancy, agent, integration):
    response = call(tenancy.client("editor"), "sync", agent, integration)

    assert response.status_code == 409 and response.json()["code"] == "agent_not_running"


def test_an_unknown_agent_is_404(tenancy, agent, integration):
    response = tenancy.client("editor").get(f"/api/agents/{uuid.uuid4()}/integrations")

    assert response.status_code == 404


def test_an_adopted_hermes_cannot_be_synced(tenancy):
    agent = tenancy.agent(runtime_family="hermes", is_external=True, deploy_target="external", status="running")

    response = tenancy.client("editor").post(url(agent, "/sync"))

    assert response.status_code == 409 and response.json()["code"] == "unsupported"
