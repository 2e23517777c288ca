"""GET/POST /api/workspaces, GET/DELETE /api/workspaces/:id."""

from __future__ import annotations

import uuid
from datetime import datetime

import pytest

from agents.models import Agent, WorkspaceAgent
from tests.factories.accounts import AdminFactory, UserFactory
from tests.factories.agents import AgentFactory, WorkspaceAgentFactory
from tests.factories.workspaces import WorkspaceFactory, make_api_key, make_member
from tests.support import client_for
from workspaces.models import ApiKey, Membership, Workspace
from workspaces.roles import Role

pytestmark = pytest.mark.django_db


def _by_id(rows) -> dict:
    return {row["id"]: row for row in rows}


def test_the_list_gives_each_member_workspace_with_role_and_counts():
    workspace = WorkspaceFactory(name="Alpha")
    viewer = make_member(workspace, Role.VIEWER)
    make_member(workspace, Role.EDITOR)
    for _ in range(3):  # several agents must not multiply the member count
        WorkspaceAgentFactory(workspace=workspace)

    response = client_for(viewer).get("/api/workspaces")

    assert response.status_code == 200
    rows = response.json()
    assert datetime.fromisoformat(rows[0].pop("created_at")) == workspace.created_at
    assert rows == [
        {
            "id": str(workspace.id),
            "name": "Alpha",
            "user_id": str(workspace.owner_id),
            "role": "viewer",
            "agent_count": 3,
            "member_count": 3,
        }
    ]


def test_the_list_leaves_out_workspaces_the_caller_does_not_belong_to():
    mine = WorkspaceFactory()
    WorkspaceFactory()

    rows = client_for(mine.owner).get("/api/workspaces").json()

    assert [row["id"] for row in rows] == [str(mine.id)]
    assert rows[0]["role"] == "owner"


def test_the_list_is_newest_first_and_counts_each_workspace_separately():
    user = UserFactory()
    older = WorkspaceFactory(owner=user)
    newer = WorkspaceFactory(owner=user)
    make_member(older, Role.ADMIN)
    WorkspaceAgentFactory(workspace=newer)

    rows = client_for(user).get("/api/workspaces").json()

    assert [row["id"] for row in rows] == [str(newer.id), str(older.id)]
    by_id = _by_id(rows)
    assert (by_id[str(older.id)]["member_count"], by_id[str(older.id)]["agent_count"]) == (2, 0)
    assert (by_id[str(newer.id)]["member_count"], by_id[str(newer.id)]["agent_count"]) == (1, 1)


def test_a_platform_admin_lists_only_member_workspaces_and_acts_as_admin_in_them():
    admin = AdminFactory()
    joined = WorkspaceFactory()
    make_member(joined, Role.VIEWER, user=admin)
    WorkspaceFactory()

    rows = client_for(admin).get("/api/workspaces").json()

    assert [(row["id"], row["role"]) for row in rows] == [(str(joined.id), "admin")]


def test_a_key_with_workspaces_read_lists_only_its_own_workspace():
    user = UserFactory()
    bound = WorkspaceFactory(owner=user)
    WorkspaceFactory(owner=user)
    _, raw = make_api_key(workspace=bound, scopes=["workspaces:read"])

    rows = client_for(api_key=raw).get("/api/workspaces").json()

    assert [(row["id"], row["role"]) for row in rows] == [(str(bound.id), "viewer")]


def test_a_key_with_agents_write_lists_its_workspace_as_editor():
    bound = WorkspaceFactory()
    _, raw = make_api_key(workspace=bound, scopes=["workspaces:read", "agents:write"])

    rows = client_for(api_key=raw).get("/api/workspaces").json()

    assert [row["role"] for row in rows] == ["editor"]


def test_a_key_without_workspaces_read_may_not_list_workspaces():
    _, raw = make_api_key(workspace=WorkspaceFactory(), scopes=["agents:read", "agents:write"])

    response = client_for(api_key=raw).get("/api/workspaces")

    assert response.status_code == 403
    assert response.json()["code"] == "missing_scope"


def test_creating_a_workspace_makes_the_creator_its_owner_member():
    user = UserFactory()

    response = client_for(user).post("/api/workspaces", {"name": "  Research  "}, format="json")

    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"id", "name", "user_id", "created_at"}
    assert body["name"] == "Research"
    assert body["user_id"] == str(user.id)
    workspace = Workspace.objects.get(pk=body["id"])
    assert list(Membership.objects.filter(workspace=workspace).values_list("user_id", "role")) == [
        (user.id, "owner")
    ]


def test_a_name_of_exactly_100_characters_is_accepted():
    response = client_for(UserFactory()).post("/api/workspaces", {"name": "x" * 100}, format="json")

    assert response.status_code == 201
    assert response.json()["name"] == "x" * 100


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({}, id="missing"),
        pytest.param({"name": ""}, id="empty"),
        pytest.param({"name": "   "}, id="blank"),
        pytest.param({"name": "x" * 101}, id="101 characters"),
        pytest.param({"name": 123}, id="number"),
        pytest.param({"name": True}, id="boolean"),
        pytest.param({"name": None}, id="null"),
        pytest.param({"name": ["a"]}, id="list"),
    ],
)
def test_a_bad_name_is_refused_with_400_naming_the_field(body):
    response = client_for(UserFactory()).post("/api/workspaces", body, format="json")

    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"
    assert "name" in response.json()["fields"]
    assert not Workspace.objects.exists()


def test_a_body_that_is_not_an_object_is_refused_with_400():
    response = client_for(UserFactory()).post("/api/workspaces", ["name"], format="json")

    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"


def test_malformed_json_is_refused_with_400():
    response = client_for(UserFactory()).post("/api/workspaces", "{name", content_type="application/json")

    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"


def test_get_workspace_returns_it_with_the_callers_role_and_counts():
    workspace = WorkspaceFactory(name="Solo")
    editor = make_member(workspace, Role.EDITOR)
    WorkspaceAgentFactory(workspace=workspace)

    body = client_for(editor).get(f"/api/workspaces/{workspace.id}").json()

    assert (body["id"], body["name"], body["role"], body["member_count"], body["agent_count"]) == (
        str(workspace.id),
        "Solo",
        "editor",
        2,
        1,
    )


def test_an_unknown_workspace_id_answers_404():
    response = client_for(UserFactory()).get(f"/api/workspaces/{uuid.uuid4()}")

    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


def test_a_workspace_path_that_is_not_a_uuid_answers_404():
    response = client_for(UserFactory()).delete("/api/workspaces/not-a-uuid")

    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


def test_deleting_a_workspace_removes_memberships_keys_and_assignments_but_keeps_agents():
    workspace = WorkspaceFactory()
    make_member(workspace, Role.EDITOR)
    assignment = WorkspaceAgentFactory(workspace=workspace)
    _, raw = make_api_key(workspace=workspace, scopes=["workspaces:read"])

    response = client_for(workspace.owner).delete(f"/api/workspaces/{workspace.id}")

    assert response.status_code == 200
    assert response.json() == {"success": True}
    assert not Workspace.objects.filter(pk=workspace.pk).exists()
    assert not Membership.objects.filter(workspace_id=workspace.pk).exists()
    assert not ApiKey.objects.filter(workspace_id=workspace.pk).exists()
    assert not WorkspaceAgent.objects.filter(workspace_id=workspace.pk).exists()
    agent = Agent.objects.get(pk=assignment.agent_id)
    assert agent.status == "running" and agent.container_id
    assert client_for(api_key=raw).get("/api/workspaces").status_code == 401


def test_deleting_one_workspace_leaves_the_agents_other_assignments():
    agent = AgentFactory()
    doomed, kept = WorkspaceFactory(owner=agent.owner), WorkspaceFactory(owner=agent.owner)
    WorkspaceAgentFactory(workspace=doomed, agent=agent)
    WorkspaceAgentFactory(workspace=kept, agent=agent)

    client_for(agent.owner).delete(f"/api/workspaces/{doomed.id}")

    assert list(WorkspaceAgent.objects.filter(agent=agent).values_list("workspace_id", flat=True)) == [kept.id]


def test_only_the_owner_may_delete_even_a_platform_admin_member_may_not():
    workspace = WorkspaceFactory()
    admin = make_member(workspace, Role.ADMIN, user=AdminFactory())

    response = client_for(admin).delete(f"/api/workspaces/{workspace.id}")

    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"
    assert Workspace.objects.filter(pk=workspace.pk).exists()
