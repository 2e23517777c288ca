"""Deleting users in the console goes through accounts.deletion: refused (nothing deleted, what
to delete first named) while they own agents or a Remote Docker host agents use; an idle host
goes with its owner, with its grants. The same through the model: no cascade strands a workload."""

from __future__ import annotations

import pytest
from django.db.models import ProtectedError

from accounts.deletion import UserInUse, user_delete
from accounts.models import User
from agents.models import Agent
from agents.targets.grants import target_grant_workspace_add
from agents.targets.models import RemoteHost, TargetGrant
from tests.factories.accounts import UserFactory
from tests.factories.agents import AgentFactory
from tests.factories.remote_hosts import RemoteHostFactory
from tests.factories.workspaces import WorkspaceFactory

pytestmark = pytest.mark.django_db

USERS = "/admin/accounts/user/"


def delete_one(console, user):
    return console.post(f"{USERS}{user.pk}/delete/", {"post": "yes"})


def delete_many(console, *users):
    return console.post(USERS, {"action": "delete_selected", "_selected_action": [str(u.pk) for u in users],
                                "post": "yes"})


def test_a_user_who_owns_nothing_is_deleted(console):
    user = UserFactory()

    response = delete_one(console, user)

    assert response.status_code == 302
    assert not User.objects.filter(pk=user.pk).exists()


def test_a_user_who_owns_agents_is_refused_naming_them_and_nothing_is_deleted(console):
    user = UserFactory(email="leaver@example.com")
    AgentFactory(owner=user, name="scout")
    AgentFactory(owner=user, name="builder")

    confirmation = console.get(f"{USERS}{user.pk}/delete/").content.decode()
    response = delete_one(console, user)

    assert "leaver@example.com: their agents &#x27;builder&#x27;, &#x27;scout&#x27;" in confirmation
    assert response.status_code == 200  # the confirmation page again, saying why
    assert "&#x27;builder&#x27;, &#x27;scout&#x27;" in response.content.decode()
    assert User.objects.filter(pk=user.pk).exists() and Agent.objects.filter(owner=user).count() == 2


def test_a_user_whose_host_runs_someone_elses_agents_is_refused_naming_those_agents(console):
    owner = UserFactory(email="host-owner@example.com")
    host = RemoteHostFactory(owner=owner, name="lab")
    AgentFactory(name="borrower", deploy_target="remote-docker", execution_target_id=host.execution_target_id)

    response = delete_one(console, owner)

    assert response.status_code == 200
    assert "the agents on their Remote Docker host &#x27;lab&#x27;: &#x27;borrower&#x27;" in response.content.decode()
    assert User.objects.filter(pk=owner.pk).exists() and RemoteHost.objects.filter(pk=host.pk).exists()


def test_an_idle_host_goes_with_its_owner_and_its_grants_with_it(console):
    owner = UserFactory()
    host = RemoteHostFactory(owner=owner, name="idle-box")
    target_grant_workspace_add(execution_target_id=host.execution_target_id, workspace=WorkspaceFactory())

    confirmation = console.get(f"{USERS}{owner.pk}/delete/").content.decode()
    response = delete_one(console, owner)

    assert "idle-box" in confirmation and "Cannot delete" not in confirmation
    assert response.status_code == 302
    assert not User.objects.filter(pk=owner.pk).exists()
    assert not RemoteHost.objects.filter(pk=host.pk).exists()
    assert not TargetGrant.objects.filter(execution_target_id=host.execution_target_id).exists()


def test_the_bulk_action_deletes_nothing_while_one_selected_user_owns_agents(console):
    free, holding = UserFactory(), UserFactory(email="holder@example.com")
    AgentFactory(owner=holding, name="keeper")

    response = delete_many(console, free, holding)

    assert response.status_code == 200
    assert "holder@example.com: their agents &#x27;keeper&#x27;" in response.content.decode()
    assert User.objects.filter(pk__in=[free.pk, holding.pk]).count() == 2


def test_the_bulk_action_deletes_users_with_their_idle_hosts(console):
    first, second = UserFactory(), UserFactory()
    host = RemoteHostFactory(owner=second)

    response = delete_many(console, first, second)

    assert response.status_code == 302
    assert not User.objects.filter(pk__in=[first.pk, second.pk]).exists()
    assert not RemoteHost.objects.filter(pk=host.pk).exists()


def test_a_workspace_owner_is_refused_as_before(console):
    owner = UserFactory()
    workspace = WorkspaceFactory(owner=owner, name="team-space")

    response = delete_one(console, owner)

    assert response.status_code == 200 and "team-space" in response.content.decode()
    assert User.objects.filter(pk=owner.pk).exists()
    with pytest.raises(UserInUse, match="team-space"):  # the service says so too
        user_delete(user=owner)
    assert workspace.owner_id == owner.pk


def test_the_service_refuses_and_keeps_the_idle_hosts_it_would_have_released():
    owner = UserFactory(email="two-things@example.com")
    idle = RemoteHostFactory(owner=owner)
    AgentFactory(owner=owner, name="still-here")

    with pytest.raises(UserInUse) as refused:
        user_delete(user=owner)

    assert refused.value.message == (
        "two-things@example.com cannot be deleted yet. Delete first: their agents 'still-here'.")
    assert refused.value.code == "user_in_use"
    assert RemoteHost.objects.filter(pk=idle.pk).exists()


def test_no_other_path_deletes_a_user_from_under_agents_or_hosts():
    with_agent, with_host = UserFactory(), UserFactory()
    AgentFactory(owner=with_agent)
    RemoteHostFactory(owner=with_host)

    for user in (with_agent, with_host):
        with pytest.raises(ProtectedError):
            user.delete()
