"""GET /api/agents: visibility, roles, workspaces[] and a constant number of queries."""

from __future__ import annotations

import pytest

from tests.factories.agents import AgentFactory, WorkspaceAgentFactory
from tests.factories.workspaces import WorkspaceFactory, make_member
from tests.support import client_for

pytestmark = pytest.mark.django_db


def _ids(response):
    return [row["id"] for row in response.json()]


def test_it_lists_owned_and_shared_agents_newest_first(tenancy):
    shared = tenancy.agent()
    own = AgentFactory(owner=tenancy.editor)
    AgentFactory()  # someone else's, not shared

    response = tenancy.client("editor").get("/api/agents")

    assert response.status_code == 200
    assert _ids(response) == [str(own.id), str(shared.id)]


def test_each_row_carries_role_ownership_and_workspaces(tenancy):
    agent = tenancy.agent(name="alpha")

    rows = {r["id"]: r for r in tenancy.client("editor").get("/api/agents").json()}
    row = rows[str(agent.id)]

    assert row["effectiveRole"] == "editor"
    assert row["isDirectOwner"] is False
    assert row["workspaces"] == [{"id": str(tenancy.workspace.id), "name": tenancy.workspace.name, "role": "member"}]
    for field in ("name", "status", "sandbox_type", "vcpu", "ram_mb", "disk_gb", "node", "container_id", "created_at"):
        assert field in row


def test_the_direct_owner_is_owner_even_when_only_a_viewer_of_the_workspace(tenancy):
    agent = tenancy.agent()

    row = tenancy.client("agent_owner").get("/api/agents").json()[0]

    assert row["id"] == str(agent.id)
    assert row["effectiveRole"] == "owner"
    assert row["isDirectOwner"] is True


def test_the_highest_workspace_role_wins(tenancy):
    agent = tenancy.agent()
    second = WorkspaceFactory()
    make_member(second, "admin", user=tenancy.viewer)
    WorkspaceAgentFactory(workspace=second, agent=agent)

    row = tenancy.client("viewer").get("/api/agents").json()[0]

    assert row["effectiveRole"] == "admin"
    assert {w["id"] for w in row["workspaces"]} == {str(tenancy.workspace.id), str(second.id)}


def test_workspaces_the_caller_is_not_in_are_not_revealed(tenancy):
    agent = tenancy.agent()
    WorkspaceAgentFactory(workspace=WorkspaceFactory(name="secret"), agent=agent)

    row = tenancy.client("editor").get("/api/agents").json()[0]

    assert [w["name"] for w in row["workspaces"]] == [tenancy.workspace.name]


def test_scope_owned_lists_only_direct_ownership(tenancy):
    tenancy.agent()
    own = AgentFactory(owner=tenancy.editor)

    response = tenancy.client("editor").get("/api/agents?scope=owned")

    assert _ids(response) == [str(own.id)]


def test_an_unknown_scope_is_a_validation_error(tenancy):
    response = tenancy.client("editor").get("/api/agents?scope=everything")

    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"


def test_an_outsider_sees_nothing(tenancy):
    tenancy.agent()

    assert tenancy.client("outsider").get("/api/agents").json() == []


def test_a_platform_admin_sees_every_agent_as_admin(tenancy):
    agent = tenancy.agent()
    loner = AgentFactory()

    rows = {r["id"]: r for r in tenancy.client("platform_admin").get("/api/agents").json()}

    assert set(rows) == {str(agent.id), str(loner.id)}
    assert rows[str(loner.id)]["effectiveRole"] == "admin"
    assert rows[str(loner.id)]["workspaces"] == []


@pytest.mark.parametrize(("scopes", "role"), [("agents:read", "viewer"), ("agents:write", "editor")])
def test_a_key_sees_only_its_workspace_with_the_role_of_its_scopes(tenancy, scopes, role):
    agent = tenancy.agent()
    AgentFactory(owner=tenancy.owner)  # the issuer's own agent, not in the workspace
    elsewhere = AgentFactory()
    WorkspaceAgentFactory(workspace=tenancy.other_workspace, agent=elsewhere)

    rows = tenancy.client(f"key:{scopes}").get("/api/agents").json()

    assert [r["id"] for r in rows] == [str(agent.id)]
    assert rows[0]["effectiveRole"] == role


def test_a_key_with_scope_owned_sees_only_its_issuers_agents_in_its_workspace(tenancy):
    tenancy.agent()  # owned by tenancy.agent_owner, not the issuer
    mine = AgentFactory(owner=tenancy.owner)
    WorkspaceAgentFactory(workspace=tenancy.workspace, agent=mine)
    AgentFactory(owner=tenancy.owner)  # the issuer's, outside the workspace

    rows = tenancy.client("key:agents:read").get("/api/agents?scope=owned").json()

    assert [r["id"] for r in rows] == [str(mine.id)]


def test_a_key_of_another_workspace_sees_nothing_of_this_one(tenancy):
    tenancy.agent()

    assert tenancy.client("other-key").get("/api/agents").json() == []


def test_a_key_without_agent_scopes_is_refused(tenancy):
    response = tenancy.client("key:workspaces:read").get("/api/agents")

    assert response.status_code == 403
    assert response.json()["code"] == "missing_scope"


def test_no_credential_is_401(tenancy):
    response = tenancy.client("anonymous").get("/api/agents")

    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


def _populate(user, *, agents: int, workspaces: int):
    spaces = [WorkspaceFactory() for _ in range(workspaces)]
    for space in spaces:
        make_member(space, "editor", user=user)
    for i in range(agents):
        agent = AgentFactory()
        WorkspaceAgentFactory(workspace=spaces[i % workspaces], agent=agent)
        WorkspaceAgentFactory(workspace=spaces[(i + 1) % workspaces], agent=agent)


def _count_queries(client, django_assert_max_num_queries):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        response = client.get("/api/agents")
    assert response.status_code == 200
    return len(captured.captured_queries), len(response.json())


def test_the_number_of_queries_does_not_grow_with_agents_or_workspaces(user, django_assert_max_num_queries):
    client = client_for(user)
    _populate(user, agents=10, workspaces=2)
    small, listed_small = _count_queries(client, django_assert_max_num_queries)
    _populate(user, agents=90, workspaces=20)
    large, listed_large = _count_queries(client, django_assert_max_num_queries)

    assert (listed_small, listed_large) == (10, 100)
    assert small == large
    with django_assert_max_num_queries(4):
        client.get("/api/agents")


def test_a_keys_query_count_does_not_grow_either(tenancy, django_assert_max_num_queries):
    client = tenancy.client("key:agents:read")
    client.get("/api/agents")  # the key's first use records last_used_at (once a minute)
    for _ in range(5):
        WorkspaceAgentFactory(workspace=tenancy.workspace)
    small, _ = _count_queries(client, django_assert_max_num_queries)
    for _ in range(45):
        WorkspaceAgentFactory(workspace=tenancy.workspace)
    large, listed = _count_queries(client, django_assert_max_num_queries)

    assert listed == 50
    assert small == large


def test_the_list_is_gzipped_when_the_client_accepts_it(tenancy):
    import gzip

    for _ in range(5):
        tenancy.agent()
    client = tenancy.client("editor")
    plain = client.get("/api/agents")

    response = client.get("/api/agents", HTTP_ACCEPT_ENCODING="gzip, deflate")

    assert response["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in response["Vary"]
    assert len(response.content) < len(plain.content)
    assert gzip.decompress(response.content) == plain.content
    assert plain.get("Content-Encoding") is None
