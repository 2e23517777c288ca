"""Who may call each /agents/:id route, on an agent shared into a workspace.

The agent has no container, so a caller who gets through access control reaches the
state rules without an engine: start/restart answer 400 no_container, gateway-url 409.
"""

from __future__ import annotations

import pytest

from agents.models import Agent
from tests.factories.workspaces import make_api_key
from tests.support import client_for
from workspaces.roles import Role
from workspaces.services import membership_update

pytestmark = pytest.mark.django_db

CALLERS = (
    "agent_owner", "owner", "admin", "editor", "viewer", "platform_admin",
    "key:agents:write", "key:agents:read", "key:workspaces:read", "other-key", "outsider", "anonymous",
)
READERS = {"agent_owner", "owner", "admin", "editor", "viewer", "platform_admin", "key:agents:write",
           "key:agents:read"}
OPERATORS = {"agent_owner", "owner", "admin", "editor", "platform_admin", "key:agents:write"}
REFUSED = {"outsider": (404, "not_found"), "other-key": (404, "not_found"), "anonymous": (401, "not_authenticated")}


def _expected(caller, allowed, success, low_role_code="permission_denied"):
    if caller in allowed:
        return success
    if caller in REFUSED:
        return REFUSED[caller]
    if caller.startswith("key:"):
        return (403, "missing_scope")
    return (403, low_role_code)


ROUTES = {
    "get": ("get", "", READERS, (200, None)),
    "start": ("post", "/start", OPERATORS, (400, "no_container")),
    "stop": ("post", "/stop", OPERATORS, (200, None)),
    "restart": ("post", "/restart", OPERATORS, (400, "no_container")),
    "redeploy": ("post", "/redeploy", OPERATORS, (200, None)),
    "gateway-url": ("get", "/gateway-url", READERS, (409, "conflict")),
}


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("route", sorted(ROUTES))
def test_each_caller_gets_the_answer_its_role_allows(tenancy, route, caller):
    agent = tenancy.agent()
    method, suffix, allowed, success = ROUTES[route]

    response = getattr(tenancy.client(caller), method)(f"/api/agents/{agent.id}{suffix}")

    status, code = _expected(caller, allowed, success)
    assert response.status_code == status, response.content
    if code:
        assert response.json()["code"] == code


@pytest.mark.parametrize("caller", CALLERS)
def test_only_the_direct_owner_deletes(tenancy, caller):
    agent = tenancy.agent()

    response = tenancy.client(caller).delete(f"/api/agents/{agent.id}")

    if caller == "agent_owner":
        assert response.status_code == 200
        assert response.json() == {"success": True}
        assert not Agent.objects.filter(pk=agent.pk).exists()
        return
    expected = REFUSED.get(caller) or ((403, "missing_scope") if caller in (
        "key:agents:read", "key:workspaces:read") else (403, "permission_denied"))
    assert (response.status_code, response.json()["code"]) == expected
    assert Agent.objects.filter(pk=agent.pk).exists()


def test_a_key_of_the_agents_owner_with_agents_write_may_delete_inside_its_workspace(tenancy):
    membership = tenancy.workspace.memberships.get(user=tenancy.agent_owner)
    membership_update(membership=membership, acting_role=Role.OWNER, role=Role.EDITOR)
    agent = tenancy.agent()
    _, raw = make_api_key(workspace=tenancy.workspace, created_by=tenancy.agent_owner, scopes=("agents:write",))

    response = client_for(api_key=raw).delete(f"/api/agents/{agent.id}")

    assert response.status_code == 200
    assert not Agent.objects.filter(pk=agent.pk).exists()


def test_an_unknown_agent_is_404(tenancy):
    response = tenancy.client("agent_owner").get("/api/agents/00000000-0000-0000-0000-000000000000")

    assert (response.status_code, response.json()["code"]) == (404, "not_found")


def test_a_malformed_agent_id_is_404(tenancy):
    assert tenancy.client("agent_owner").get("/api/agents/not-a-uuid").status_code == 404
