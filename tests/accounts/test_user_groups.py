"""/api/admin/user-groups: platform admins make groups of users (grants of platform targets name
them); everyone else is refused, keys before any lookup."""

from __future__ import annotations

import uuid

import pytest

from accounts.models import UserGroup, UserGroupMember
from agents.targets.grants import GrantSet, grants_of, target_grants_set
from tests.factories.accounts import AdminFactory, UserFactory
from tests.factories.workspaces import WorkspaceFactory, make_api_key
from tests.support import client_for

pytestmark = pytest.mark.django_db

GROUPS = "/api/admin/user-groups"


@pytest.fixture
def admin():
    return client_for(AdminFactory())


def test_a_group_is_created_with_members_listed_and_read(admin):
    alice, bob = UserFactory(email="alice@example.com"), UserFactory(email="bob@example.com")

    created = admin.post(GROUPS, {"name": " GPU users ", "description": "the big cluster",
                                  "members": [str(bob.pk), str(alice.pk)]}, format="json")

    assert created.status_code == 201, created.content
    group = created.json()
    assert (group["name"], group["description"], group["memberCount"]) == ("GPU users", "the big cluster", 2)
    assert [m["email"] for m in group["members"]] == ["alice@example.com", "bob@example.com"]
    assert set(group["members"][0]) == {"id", "email", "name", "addedAt"}
    listed = admin.get(GROUPS).json()
    assert [(g["id"], g["memberCount"]) for g in listed] == [(group["id"], 2)]
    assert "members" not in listed[0]
    assert admin.get(f"{GROUPS}/{group['id']}").json()["members"] == group["members"]


def test_names_are_unique_whatever_their_case(admin):
    admin.post(GROUPS, {"name": "Ops"}, format="json")
    again = admin.post(GROUPS, {"name": "ops"}, format="json")
    assert (again.status_code, again.json()["code"]) == (409, "group_name_taken")
    other = admin.post(GROUPS, {"name": "Dev"}, format="json").json()
    renamed = admin.patch(f"{GROUPS}/{other['id']}", {"name": "OPS"}, format="json")
    assert (renamed.status_code, renamed.json()["code"]) == (409, "group_name_taken")


@pytest.mark.parametrize("payload", [{}, {"name": ""}, {"name": "   "}, {"name": "x" * 101}, {"name": 5},
                                     {"name": "g", "members": ["not-an-id"]},
                                     {"name": "g", "members": [str(uuid.uuid4())]},
                                     {"name": "g", "members": "everyone"}])
def test_bad_input_is_400(admin, payload):
    response = admin.post(GROUPS, payload, format="json")
    assert (response.status_code, response.json()["code"]) == (400, "validation_error")
    assert not UserGroup.objects.exists()


def test_a_group_is_renamed_and_deleted_with_its_grants(admin):
    group = admin.post(GROUPS, {"name": "Ops"}, format="json").json()
    url = f"{GROUPS}/{group['id']}"

    patched = admin.patch(url, {"name": "Operations", "description": "on call"}, format="json").json()
    assert (patched["name"], patched["description"]) == ("Operations", "on call")
    target_grants_set(execution_target_id="proxmox", grants=GrantSet(user_groups=(uuid.UUID(group["id"]),)))

    assert admin.delete(url).json() == {"success": True}
    assert admin.get(url).status_code == 404
    assert grants_of("proxmox").user_groups == ()
    assert admin.delete(url).status_code == 404


def test_members_are_added_by_id_or_email_once_and_removed(admin):
    group = admin.post(GROUPS, {"name": "Ops"}, format="json").json()
    members = f"{GROUPS}/{group['id']}/members"
    carol, dave = UserFactory(email="carol@example.com"), UserFactory(email="Dave@example.com")

    by_id = admin.post(members, {"userId": str(carol.pk)}, format="json")
    assert by_id.status_code == 201 and by_id.json()["email"] == "carol@example.com"
    by_email = admin.post(members, {"email": "dave@EXAMPLE.com"}, format="json")
    assert by_email.status_code == 201 and by_email.json()["id"] == str(dave.pk)
    assert admin.post(members, {"userId": str(carol.pk)}, format="json").status_code == 200  # already in
    assert [m["email"] for m in admin.get(members).json()] == ["carol@example.com", "Dave@example.com"]

    assert admin.post(members, {"email": "nobody@example.com"}, format="json").status_code == 404
    assert admin.post(members, {"userId": str(uuid.uuid4())}, format="json").status_code == 404
    both = admin.post(members, {"userId": str(carol.pk), "email": "dave@example.com"}, format="json")
    assert both.status_code == 400
    assert admin.post(members, {}, format="json").status_code == 400

    assert admin.delete(f"{members}/{carol.pk}").json() == {"success": True}
    assert admin.delete(f"{members}/{carol.pk}").status_code == 404
    assert list(UserGroupMember.objects.values_list("user__email", flat=True)) == ["Dave@example.com"]


def test_an_unknown_group_is_404_on_every_route(admin):
    for url in (f"{GROUPS}/{uuid.uuid4()}", f"{GROUPS}/not-an-id", f"{GROUPS}/{uuid.uuid4()}/members"):
        assert admin.get(url).status_code == 404


def test_only_platform_admin_sessions_may_manage_groups():
    user = UserFactory()
    refused = client_for(user).get(GROUPS)
    assert (refused.status_code, refused.json()["code"]) == (403, "permission_denied")
    assert client_for(user).post(GROUPS, {"name": "mine"}, format="json").status_code == 403
    assert client_for().get(GROUPS).status_code == 401

    admin_user = AdminFactory()
    workspace = WorkspaceFactory(owner=admin_user)
    key = make_api_key(workspace=workspace, scopes=["agents:read", "agents:write", "workspaces:read"])[1]
    for response in (client_for(api_key=key).get(GROUPS), client_for(api_key=key).get(f"{GROUPS}/{uuid.uuid4()}")):
        assert (response.status_code, response.json()["code"]) == (403, "session_required")
