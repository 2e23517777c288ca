"""The exact bodies of the workspace routes this app's other tests read as parsed JSON only."""

from __future__ import annotations

import pytest

from tests.bodies import assert_body
from tests.factories.workspaces import make_api_key
from workspaces.models import ApiKey

pytestmark = pytest.mark.django_db


def drf_time(value) -> str:
    """DRF's DateTimeField writes UTC as `Z` (these routes always have)."""
    return value.isoformat().replace("+00:00", "Z")


def test_the_list_and_one_workspace(tenancy):
    workspace = tenancy.workspace
    members = workspace.memberships.count()
    row = {"id": str(workspace.id), "name": workspace.name, "user_id": str(tenancy.owner.id),
           "created_at": drf_time(workspace.created_at), "role": "editor", "agent_count": 0, "member_count": members}

    assert_body(tenancy.client("editor").get("/api/workspaces"), [row])
    assert_body(tenancy.client("editor").get(f"/api/workspaces/{workspace.id}"), row)


def test_an_api_key_is_answered_once_with_its_secret(tenancy):
    response = tenancy.client("owner").post(f"/api/workspaces/{tenancy.workspace.id}/api-keys",
                                            {"name": "ci", "scopes": ["agents:write", "agents:read"]}, format="json")

    key = ApiKey.objects.get(name="ci")
    assert_body(response, {
        "id": str(key.id), "name": "ci", "scopes": ["agents:read", "agents:write"], "prefix": key.prefix,
        "created_by": str(tenancy.owner.id), "created_at": drf_time(key.created_at), "last_used_at": None,
        "key": response.json()["key"],
    }, status=201)
    assert response.json()["key"].startswith(key.prefix)


def test_deletes_answer_success(tenancy):
    workspace, owner = tenancy.workspace, tenancy.client("owner")
    key, _ = make_api_key(workspace=workspace)
    viewer = tenancy.viewer

    assert_body(owner.delete(f"/api/workspaces/{workspace.id}/api-keys/{key.id}"), {"success": True})
    assert_body(owner.delete(f"/api/workspaces/{workspace.id}/members/{viewer.id}"), {"success": True})
    assert_body(owner.delete(f"/api/workspaces/{workspace.id}"), {"success": True})
