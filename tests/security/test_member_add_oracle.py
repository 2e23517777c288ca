"""Adding a member was an oracle of which emails have an account (404 "No user
has this email address." against 201 with the row). An add is now an invitation: the answer,
and everything the inviting admin can read afterwards, is the same whether the email has an
account, has none, or has a deactivated one. The invitee joins by accepting."""

from __future__ import annotations

import pytest

from tests.factories.accounts import UserFactory
from tests.factories.workspaces import WorkspaceFactory
from tests.support import client_for
from workspaces.models import Membership

pytestmark = pytest.mark.django_db

VARYING = ("id", "email", "createdAt", "expiresAt")


@pytest.fixture
def workspace():
    return WorkspaceFactory()


def _invite(workspace, email, role="editor"):
    return client_for(workspace.owner).post(f"/api/workspaces/{workspace.id}/members", {"email": email, "role": role},
                                            format="json")


def _same_part(response) -> tuple:
    body = response.json()
    return response.status_code, {k: v for k, v in body.items() if k not in VARYING}, sorted(body)


def test_an_existing_an_unknown_and_a_deactivated_email_get_the_same_answer(workspace):
    UserFactory(email="known@example.com")
    UserFactory(email="gone@example.com", is_active=False)

    answers = [_invite(workspace, email) for email in ("known@example.com", "nobody@example.com",
                                                        "gone@example.com")]

    assert answers[0].status_code == 202, answers[0].content
    assert _same_part(answers[0]) == _same_part(answers[1]) == _same_part(answers[2])
    assert "No user" not in str([a.content for a in answers])


def test_what_the_admin_reads_afterwards_does_not_tell_them_apart_either(workspace):
    UserFactory(email="known@example.com")
    for email in ("known@example.com", "nobody@example.com"):
        _invite(workspace, email)
    owner = client_for(workspace.owner)

    members = owner.get(f"/api/workspaces/{workspace.id}/members").json()
    invitations = owner.get(f"/api/workspaces/{workspace.id}/invitations").json()

    assert [m["email"] for m in members] == [workspace.owner.email]  # nobody joined yet
    assert {i["email"] for i in invitations} == {"known@example.com", "nobody@example.com"}
    assert len({tuple(sorted(i)) for i in invitations}) == 1
    assert owner.get(f"/api/workspaces/{workspace.id}").json()["member_count"] == 1


def test_the_invitee_joins_only_by_accepting(workspace):
    invitee = UserFactory(email="Jane@example.com")
    _invite(workspace, "jane@EXAMPLE.com", role="viewer")
    assert not Membership.objects.filter(workspace=workspace, user=invitee).exists()

    (invitation,) = client_for(invitee).get("/api/invitations").json()
    accepted = client_for(invitee).post(f"/api/invitations/{invitation['id']}/accept")

    assert accepted.status_code == 200, accepted.content
    assert (accepted.json()["id"], accepted.json()["role"]) == (str(workspace.id), "viewer")
    assert Membership.objects.get(workspace=workspace, user=invitee).role == "viewer"
    assert client_for(invitee).get("/api/invitations").json() == []


def test_an_account_made_after_the_invitation_may_accept_it(workspace):
    _invite(workspace, "later@example.com")
    newcomer = UserFactory(email="later@example.com")

    (invitation,) = client_for(newcomer).get("/api/invitations").json()

    assert client_for(newcomer).post(f"/api/invitations/{invitation['id']}/accept").status_code == 200


def test_nobody_else_sees_or_accepts_an_invitation(workspace):
    _invite(workspace, "jane@example.com")
    (invitation,) = client_for(workspace.owner).get(f"/api/workspaces/{workspace.id}/invitations").json()
    stranger = UserFactory()

    assert client_for(stranger).get("/api/invitations").json() == []
    assert client_for(stranger).post(f"/api/invitations/{invitation['id']}/accept").status_code == 404
    assert client_for(stranger).delete(f"/api/invitations/{invitation['id']}").status_code == 404
    assert not Membership.objects.filter(workspace=workspace, user=stranger).exists()
