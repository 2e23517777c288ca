"""/api/workspaces/:id/members and /api/workspaces/:id/members/:userId."""

from __future__ import annotations

import uuid

import pytest

from tests.factories.accounts import AdminFactory, UserFactory
from tests.factories.workspaces import WorkspaceFactory, make_api_key, make_member
from tests.support import client_for
from workspaces.models import ApiKey, Invitation, Membership
from workspaces.roles import Role

pytestmark = pytest.mark.django_db


@pytest.fixture
def workspace():
    return WorkspaceFactory()


def _members_url(workspace, user=None) -> str:
    base = f"/api/workspaces/{workspace.id}/members"
    return f"{base}/{user.id if hasattr(user, 'id') else user}" if user is not None else base


def _role_of(workspace, user) -> str | None:
    return Membership.objects.filter(workspace=workspace, user=user).values_list("role", flat=True).first()


# ---- listing


def test_the_member_list_gives_user_id_email_name_and_role(workspace):
    viewer = make_member(workspace, Role.VIEWER)

    response = client_for(viewer).get(_members_url(workspace))

    assert response.status_code == 200
    assert response.json() == [
        {
            "userId": str(workspace.owner.id), "email": workspace.owner.email, "name": workspace.owner.name,
            "role": "owner",
        },
        {"userId": str(viewer.id), "email": viewer.email, "name": viewer.name, "role": "viewer"},
    ]


def test_a_key_with_workspaces_read_may_list_members(workspace):
    _, raw = make_api_key(workspace=workspace, scopes=["workspaces:read"])

    response = client_for(api_key=raw).get(_members_url(workspace))

    assert response.status_code == 200
    assert [m["role"] for m in response.json()] == ["owner"]


# ---- adding: an invitation, accepted by its invitee


def _invitation_of(workspace, email):
    return Invitation.objects.filter(workspace=workspace, email=email).first()


def _accept(user, invitation):
    return client_for(user).post(f"/api/invitations/{invitation.id}/accept")


def test_an_admin_invites_by_email_and_the_user_joins_on_accepting(workspace):
    admin = make_member(workspace, Role.ADMIN)
    newcomer = UserFactory(email="Jane.Doe@example.com")

    response = client_for(admin).post(
        _members_url(workspace), {"email": "  jane.DOE@EXAMPLE.com ", "role": "editor"}, format="json"
    )

    assert response.status_code == 202, response.content
    body = response.json()
    assert set(body) == {"id", "workspaceId", "workspaceName", "email", "role", "invitedBy", "createdAt",
                         "expiresAt"}
    assert (body["email"], body["role"], body["invitedBy"], body["workspaceId"]) == (
        "jane.doe@example.com", "editor", admin.email, str(workspace.id))
    assert _role_of(workspace, newcomer) is None
    accepted = _accept(newcomer, _invitation_of(workspace, "jane.doe@example.com"))
    assert accepted.status_code == 200 and accepted.json()["role"] == "editor"
    assert _role_of(workspace, newcomer) == "editor"
    assert _invitation_of(workspace, "jane.doe@example.com") is None


def test_inviting_an_unknown_or_deactivated_email_answers_the_same_202(workspace):
    UserFactory(email="gone@example.com", is_active=False)

    for email in ("nobody@example.com", "gone@example.com"):
        response = client_for(workspace.owner).post(_members_url(workspace), {"email": email, "role": "viewer"},
                                                    format="json")
        assert response.status_code == 202
        assert response.json()["email"] == email


def test_inviting_again_replaces_the_role_and_keeps_one_invitation(workspace):
    owner = client_for(workspace.owner)
    owner.post(_members_url(workspace), {"email": "a@example.com", "role": "viewer"}, format="json")

    owner.post(_members_url(workspace), {"email": "A@example.com", "role": "editor"}, format="json")

    assert list(Invitation.objects.values_list("email", "role")) == [("a@example.com", "editor")]


def test_the_invitee_may_decline_and_an_admin_may_withdraw(workspace):
    owner = client_for(workspace.owner)
    invitee = UserFactory(email="jane@example.com")
    for email in ("jane@example.com", "other@example.com"):
        owner.post(_members_url(workspace), {"email": email, "role": "viewer"}, format="json")

    declined = client_for(invitee).delete(f"/api/invitations/{_invitation_of(workspace, 'jane@example.com').id}")
    withdrawn = owner.delete(
        f"/api/workspaces/{workspace.id}/invitations/{_invitation_of(workspace, 'other@example.com').id}")

    assert declined.json() == withdrawn.json() == {"success": True}
    assert not Invitation.objects.exists() and _role_of(workspace, invitee) is None


def test_an_expired_invitation_is_gone(workspace, settings):
    settings.WORKSPACE_INVITATION_DAYS = 0
    invitee = UserFactory(email="late@example.com")
    client_for(workspace.owner).post(_members_url(workspace), {"email": invitee.email, "role": "viewer"},
                                     format="json")

    assert client_for(invitee).get("/api/invitations").json() == []
    assert client_for(workspace.owner).get(f"/api/workspaces/{workspace.id}/invitations").json() == []
    assert _accept(invitee, _invitation_of(workspace, invitee.email)).status_code == 404


def test_inviting_someone_who_is_already_a_member_answers_409(workspace):
    member = make_member(workspace, Role.VIEWER)

    response = client_for(workspace.owner).post(
        _members_url(workspace), {"email": member.email.upper(), "role": "editor"}, format="json"
    )

    assert response.status_code == 409
    assert response.json()["code"] == "conflict"
    assert _role_of(workspace, member) == "viewer" and not Invitation.objects.exists()


def test_accepting_when_already_a_member_answers_409(workspace):
    newcomer = UserFactory()
    client_for(workspace.owner).post(_members_url(workspace), {"email": newcomer.email, "role": "editor"},
                                     format="json")
    invitation = _invitation_of(workspace, newcomer.email)
    make_member(workspace, Role.VIEWER, newcomer)

    assert _accept(newcomer, invitation).status_code == 409
    assert _role_of(workspace, newcomer) == "viewer"


def test_the_owner_may_invite_an_admin(workspace):
    newcomer = UserFactory()

    response = client_for(workspace.owner).post(
        _members_url(workspace), {"email": newcomer.email, "role": "admin"}, format="json"
    )

    assert response.status_code == 202
    assert _accept(newcomer, _invitation_of(workspace, newcomer.email)).status_code == 200
    assert _role_of(workspace, newcomer) == "admin"


@pytest.mark.parametrize("granter", ["admin", "platform_admin"])
def test_only_the_owner_may_invite_an_admin(workspace, granter):
    actor = make_member(workspace, Role.ADMIN) if granter == "admin" else AdminFactory()
    newcomer = UserFactory()

    response = client_for(actor).post(
        _members_url(workspace), {"email": newcomer.email, "role": "admin"}, format="json"
    )

    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"
    assert not Invitation.objects.exists()


def test_only_the_owner_may_withdraw_an_admin_invitation(workspace):
    admin = make_member(workspace, Role.ADMIN)
    client_for(workspace.owner).post(_members_url(workspace), {"email": "boss@example.com", "role": "admin"},
                                     format="json")
    url = f"/api/workspaces/{workspace.id}/invitations/{_invitation_of(workspace, 'boss@example.com').id}"

    assert client_for(admin).delete(url).status_code == 403
    assert client_for(workspace.owner).delete(url).status_code == 200


def test_the_role_owner_cannot_be_granted(workspace):
    newcomer = UserFactory()

    response = client_for(workspace.owner).post(
        _members_url(workspace), {"email": newcomer.email, "role": "owner"}, format="json"
    )

    assert response.status_code == 400
    assert "role" in response.json()["fields"]
    assert not Invitation.objects.exists()


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"role": "viewer"}, id="email missing"),
        pytest.param({"email": "", "role": "viewer"}, id="email empty"),
        pytest.param({"email": 42, "role": "viewer"}, id="email not a string"),
        pytest.param({"email": "not-an-address", "role": "viewer"}, id="email not an address"),
        pytest.param({"email": "a@example.com"}, id="role missing"),
        pytest.param({"email": "a@example.com", "role": "superuser"}, id="role unknown"),
        pytest.param({"email": "a@example.com", "role": 3}, id="role not a string"),
    ],
)
def test_a_bad_add_body_is_refused_with_400(workspace, body):
    UserFactory(email="a@example.com")

    response = client_for(workspace.owner).post(_members_url(workspace), body, format="json")

    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"
    assert Membership.objects.filter(workspace=workspace).count() == 1
    assert not Invitation.objects.exists()


# ---- changing roles


def test_an_admin_changes_an_editor_to_viewer(workspace):
    admin = make_member(workspace, Role.ADMIN)
    editor = make_member(workspace, Role.EDITOR)

    response = client_for(admin).patch(_members_url(workspace, editor), {"role": "viewer"}, format="json")

    assert response.status_code == 200
    assert response.json()["role"] == "viewer"
    assert _role_of(workspace, editor) == "viewer"


def test_the_owner_promotes_and_demotes_admins(workspace):
    editor = make_member(workspace, Role.EDITOR)
    owner = client_for(workspace.owner)

    assert owner.patch(_members_url(workspace, editor), {"role": "admin"}, format="json").status_code == 200
    assert _role_of(workspace, editor) == "admin"
    assert owner.patch(_members_url(workspace, editor), {"role": "editor"}, format="json").status_code == 200
    assert _role_of(workspace, editor) == "editor"


def test_an_admin_may_not_promote_to_admin(workspace):
    admin = make_member(workspace, Role.ADMIN)
    editor = make_member(workspace, Role.EDITOR)

    response = client_for(admin).patch(_members_url(workspace, editor), {"role": "admin"}, format="json")

    assert response.status_code == 403
    assert _role_of(workspace, editor) == "editor"


@pytest.mark.parametrize("target_is_self", [False, True], ids=["another admin", "themselves"])
def test_an_admin_may_not_demote_an_admin(workspace, target_is_self):
    admin = make_member(workspace, Role.ADMIN)
    target = admin if target_is_self else make_member(workspace, Role.ADMIN)

    response = client_for(admin).patch(_members_url(workspace, target), {"role": "viewer"}, format="json")

    assert response.status_code == 403
    assert _role_of(workspace, target) == "admin"


@pytest.mark.parametrize("role", ["admin", "viewer"])
def test_the_owner_cannot_be_demoted_even_by_themselves(workspace, role):
    response = client_for(workspace.owner).patch(
        _members_url(workspace, workspace.owner), {"role": role}, format="json"
    )

    assert response.status_code == 403
    assert _role_of(workspace, workspace.owner) == "owner"


def test_nobody_can_be_made_owner(workspace):
    admin = make_member(workspace, Role.ADMIN)

    response = client_for(workspace.owner).patch(_members_url(workspace, admin), {"role": "owner"}, format="json")

    assert response.status_code == 400
    assert response.json()["fields"]["role"]
    assert _role_of(workspace, admin) == "admin"


def test_changing_a_user_who_is_not_a_member_answers_404(workspace):
    stranger = UserFactory()
    owner = client_for(workspace.owner)

    assert owner.patch(_members_url(workspace, stranger), {"role": "viewer"}, format="json").status_code == 404
    assert owner.patch(_members_url(workspace, uuid.uuid4()), {"role": "viewer"}, format="json").status_code == 404


def test_a_bad_role_in_a_change_is_refused_with_400(workspace):
    editor = make_member(workspace, Role.EDITOR)

    response = client_for(workspace.owner).patch(_members_url(workspace, editor), {"role": ""}, format="json")

    assert response.status_code == 400
    assert "role" in response.json()["fields"]


def test_demoting_an_issuer_to_viewer_takes_agents_write_from_their_keys(workspace):
    admin = make_member(workspace, Role.ADMIN)
    _, raw = make_api_key(workspace=workspace, created_by=admin, scopes=["agents:write", "workspaces:read"])
    key = client_for(api_key=raw)
    assert key.get("/api/workspaces").json()[0]["role"] == "editor"

    client_for(workspace.owner).patch(_members_url(workspace, admin), {"role": "viewer"}, format="json")

    assert key.get("/api/workspaces").json()[0]["role"] == "viewer"


# ---- removing


def test_an_admin_removes_an_editor(workspace):
    admin = make_member(workspace, Role.ADMIN)
    editor = make_member(workspace, Role.EDITOR)

    response = client_for(admin).delete(_members_url(workspace, editor))

    assert response.status_code == 200
    assert response.json() == {"success": True}
    assert _role_of(workspace, editor) is None


def test_any_member_may_leave(workspace):
    viewer = make_member(workspace, Role.VIEWER)

    response = client_for(viewer).delete(_members_url(workspace, viewer))

    assert response.status_code == 200
    assert _role_of(workspace, viewer) is None


def test_an_admin_may_leave(workspace):
    admin = make_member(workspace, Role.ADMIN)

    assert client_for(admin).delete(_members_url(workspace, admin)).status_code == 200
    assert _role_of(workspace, admin) is None


def test_an_admin_may_not_remove_another_admin_but_the_owner_may(workspace):
    admin, other = make_member(workspace, Role.ADMIN), make_member(workspace, Role.ADMIN)

    refused = client_for(admin).delete(_members_url(workspace, other))
    allowed = client_for(workspace.owner).delete(_members_url(workspace, other))

    assert refused.status_code == 403
    assert allowed.status_code == 200
    assert _role_of(workspace, other) is None


@pytest.mark.parametrize("actor", ["owner", "platform_admin"])
def test_the_owner_cannot_be_removed(workspace, actor):
    user = workspace.owner if actor == "owner" else AdminFactory()

    response = client_for(user).delete(_members_url(workspace, workspace.owner))

    assert response.status_code == 403
    assert _role_of(workspace, workspace.owner) == "owner"


def test_removing_a_user_who_is_not_a_member_answers_404(workspace):
    response = client_for(workspace.owner).delete(_members_url(workspace, UserFactory()))

    assert response.status_code == 404


def test_a_removed_members_keys_stop_working_and_are_revoked(workspace):
    admin = make_member(workspace, Role.ADMIN)
    key, raw = make_api_key(workspace=workspace, created_by=admin, scopes=["workspaces:read"])
    assert client_for(api_key=raw).get("/api/workspaces").status_code == 200

    client_for(workspace.owner).delete(_members_url(workspace, admin))

    response = client_for(api_key=raw).get("/api/workspaces")
    assert response.status_code == 401
    assert response.json()["code"] == "invalid_credentials"
    assert ApiKey.objects.get(pk=key.pk).revoked_at is not None


def test_a_removed_member_no_longer_sees_the_workspace(workspace):
    viewer = make_member(workspace, Role.VIEWER)
    client_for(workspace.owner).delete(_members_url(workspace, viewer))

    response = client_for(viewer).get(_members_url(workspace))

    assert response.status_code == 404
