"""THE deploy-access selector (agents.targets.access) for every kind of grantee, the workspace
viewer and API-key rules, and deployable_targets."""

from __future__ import annotations

import pytest

from accounts.groups import user_group_create, user_group_member_remove
from agents.targets.access import can_deploy_to, deploy_refusal, deployable_targets
from agents.targets.grants import GrantSet, grants_of, target_grant_workspace_add, target_grants_set
from agents.targets.models import GranteeKind, TargetGrant
from agents.targets.remote_hosts import remote_hosts_visible
from fleet.api.principal import Principal
from tests.factories.accounts import AdminFactory
from tests.factories.remote_hosts import RemoteHostFactory
from tests.factories.workspaces import WorkspaceFactory
from workspaces.models import Membership

pytestmark = pytest.mark.django_db

CLUSTER = "k8s:9b0a3c56-1b36-4f9a-9f47-000000000001"


def session(user) -> Principal:
    return Principal(user=user)


def key(workspace, *scopes, issuer=None, issuer_role="owner") -> Principal:
    return Principal(user=issuer or workspace.owner, kind="api_key", workspace_id=workspace.pk,
                     scopes=frozenset(scopes), issuer_role=issuer_role)


def grant(**parts) -> None:
    target_grants_set(execution_target_id=CLUSTER, grants=GrantSet(**parts))


def test_the_built_in_docker_engine_needs_no_grant(tenancy):
    assert can_deploy_to(session(tenancy.viewer), "docker")
    assert can_deploy_to(key(tenancy.workspace, "agents:write"), "docker")


def test_a_platform_target_without_grants_is_for_platform_admins_only(tenancy):
    assert can_deploy_to(session(tenancy.platform_admin), CLUSTER)
    assert not can_deploy_to(session(tenancy.owner), CLUSTER)
    refusal = deploy_refusal(session(tenancy.owner), CLUSTER)
    assert refusal == f"The target '{CLUSTER}' is unknown or unavailable."  # as for an id naming nothing
    # A key never carries its issuer's platform-admin power.
    workspace = WorkspaceFactory(owner=tenancy.platform_admin)
    assert not can_deploy_to(key(workspace, "agents:write"), CLUSTER)


def test_an_all_accounts_grant_lets_everyone_deploy(tenancy):
    grant(all_accounts=True)

    assert can_deploy_to(session(tenancy.outsider), CLUSTER)
    assert can_deploy_to(session(tenancy.viewer), CLUSTER)
    assert can_deploy_to(key(tenancy.workspace, "agents:write"), CLUSTER)


def test_a_user_grant_is_for_that_user_and_their_keys(tenancy):
    grant(users=(tenancy.editor.pk,))

    assert can_deploy_to(session(tenancy.editor), CLUSTER)
    assert not can_deploy_to(session(tenancy.admin), CLUSTER)
    assert can_deploy_to(key(tenancy.workspace, "agents:write", issuer=tenancy.editor, issuer_role="editor"), CLUSTER)


def test_a_group_grant_follows_the_group_s_members(tenancy):
    group = user_group_create(name="gpu users", member_ids=[str(tenancy.viewer.pk)])
    grant(user_groups=(group.pk,))

    assert can_deploy_to(session(tenancy.viewer), CLUSTER)
    assert not can_deploy_to(session(tenancy.editor), CLUSTER)

    user_group_member_remove(group=group, user_id=tenancy.viewer.pk)
    assert not can_deploy_to(session(tenancy.viewer), CLUSTER)

    group.delete()  # its grants go with it
    assert grants_of(CLUSTER).user_groups == ()


def test_a_workspace_grant_is_for_editors_and_above_never_viewers(tenancy):
    grant(workspaces=(tenancy.workspace.pk,))

    for member in (tenancy.owner, tenancy.admin, tenancy.editor):
        assert can_deploy_to(session(member), CLUSTER)
    assert not can_deploy_to(session(tenancy.viewer), CLUSTER)
    assert not can_deploy_to(session(tenancy.outsider), CLUSTER)


def test_a_workspace_grant_lets_that_workspace_s_writing_keys_deploy_while_the_issuer_may(tenancy):
    grant(workspaces=(tenancy.workspace.pk,))

    assert can_deploy_to(key(tenancy.workspace, "agents:write"), CLUSTER)
    assert not can_deploy_to(key(tenancy.workspace, "agents:read"), CLUSTER)
    assert not can_deploy_to(key(tenancy.workspace, "agents:write", issuer=tenancy.viewer, issuer_role="viewer"),
                             CLUSTER)
    assert not can_deploy_to(key(tenancy.other_workspace, "agents:write"), CLUSTER)


def test_the_workspace_argument_narrows_workspace_grants_to_that_workspace(tenancy):
    grant(workspaces=(tenancy.workspace.pk,))
    second = WorkspaceFactory(owner=tenancy.editor)

    assert can_deploy_to(session(tenancy.editor), CLUSTER, workspace=tenancy.workspace)
    assert not can_deploy_to(session(tenancy.editor), CLUSTER, workspace=second)
    assert not can_deploy_to(key(tenancy.workspace, "agents:write"), CLUSTER, workspace=second)


def test_a_demoted_member_loses_a_workspace_grant(tenancy):
    grant(workspaces=(tenancy.workspace.pk,))
    Membership.objects.filter(workspace=tenancy.workspace, user=tenancy.editor).update(role="viewer")

    assert not can_deploy_to(session(tenancy.editor), CLUSTER)


def test_a_personal_host_is_its_owner_s_and_editors_of_workspaces_it_is_shared_with(tenancy):
    host = RemoteHostFactory(owner=tenancy.outsider)
    target = host.execution_target_id
    assert can_deploy_to(session(tenancy.outsider), target)
    assert not can_deploy_to(session(tenancy.editor), target)

    target_grant_workspace_add(execution_target_id=target, workspace=tenancy.workspace)

    assert can_deploy_to(session(tenancy.editor), target)
    assert can_deploy_to(session(tenancy.admin), target)
    assert not can_deploy_to(session(tenancy.viewer), target)
    # A platform admin has no special right on someone's own machine.
    assert not can_deploy_to(session(tenancy.platform_admin), target)


def test_a_personal_host_ignores_every_grant_but_workspace_shares(tenancy):
    host = RemoteHostFactory(owner=tenancy.outsider)
    TargetGrant.objects.create(execution_target_id=host.execution_target_id, kind=GranteeKind.ALL_ACCOUNTS)
    TargetGrant.objects.create(execution_target_id=host.execution_target_id, kind=GranteeKind.USER,
                               user=tenancy.editor)

    assert not can_deploy_to(session(tenancy.editor), host.execution_target_id)


def test_remote_docker_is_never_for_a_key_not_even_the_owner_s(tenancy):
    host = RemoteHostFactory(owner=tenancy.owner)
    target_grant_workspace_add(execution_target_id=host.execution_target_id, workspace=tenancy.workspace)
    platform = RemoteHostFactory(owner=None)
    TargetGrant.objects.create(execution_target_id=platform.execution_target_id, kind=GranteeKind.ALL_ACCOUNTS)

    for target in (host.execution_target_id, platform.execution_target_id):
        assert not can_deploy_to(key(tenancy.workspace, "agents:write"), target)


def test_a_platform_host_follows_the_platform_grants(tenancy):
    host = RemoteHostFactory(owner=None)
    target = host.execution_target_id
    assert can_deploy_to(session(tenancy.platform_admin), target)
    assert not can_deploy_to(session(tenancy.editor), target)

    target_grants_set(execution_target_id=target, grants=GrantSet(workspaces=(tenancy.workspace.pk,)))

    assert can_deploy_to(session(tenancy.editor), target)
    assert not can_deploy_to(session(tenancy.viewer), target)


def test_a_host_must_have_passed_its_test(tenancy):
    for status in ("untested", "failed"):
        host = RemoteHostFactory(owner=tenancy.owner, status=status)
        refusal = deploy_refusal(session(tenancy.owner), host.execution_target_id)
        assert refusal and "test" in refusal
    assert not can_deploy_to(session(tenancy.owner), "remote:not-a-uuid")
    assert not can_deploy_to(session(tenancy.owner), "remote:9b0a3c56-1b36-4f9a-9f47-000000000002")


def test_deployable_targets_lists_what_the_caller_may_use_now(tenancy):
    own = RemoteHostFactory(owner=tenancy.editor)
    RemoteHostFactory(owner=tenancy.editor, status="untested")
    shared = RemoteHostFactory(owner=tenancy.owner)
    target_grant_workspace_add(execution_target_id=shared.execution_target_id, workspace=tenancy.workspace)
    platform = RemoteHostFactory(owner=None)
    target_grants_set(execution_target_id=platform.execution_target_id,
                      grants=GrantSet(users=(tenancy.editor.pk,)))
    RemoteHostFactory(owner=None)  # granted to nobody

    assert deployable_targets(session(tenancy.editor)) == sorted(
        ["docker", own.execution_target_id, shared.execution_target_id, platform.execution_target_id]
    )
    assert deployable_targets(session(tenancy.viewer)) == ["docker"]
    assert deployable_targets(key(tenancy.workspace, "agents:write")) == ["docker"]
    admin_view = deployable_targets(session(AdminFactory()))
    assert platform.execution_target_id in admin_view and own.execution_target_id not in admin_view


def test_grant_sets_are_replaced_exactly(tenancy):
    group = user_group_create(name="ops")
    grant(all_accounts=True, users=(tenancy.editor.pk,), user_groups=(group.pk,), workspaces=(tenancy.workspace.pk,))
    assert grants_of(CLUSTER) == GrantSet(True, (tenancy.editor.pk,), (group.pk,), (tenancy.workspace.pk,))

    grant(users=(tenancy.admin.pk, tenancy.editor.pk))

    after = grants_of(CLUSTER)
    assert (after.all_accounts, set(after.users), after.user_groups, after.workspaces) == (
        False, {tenancy.admin.pk, tenancy.editor.pk}, (), ())




def test_a_key_neither_lists_nor_operates_a_remote_agent_assigned_to_its_workspace(tenancy):
    from tests.factories.agents import AgentFactory, WorkspaceAgentFactory
    from tests.support import client_for

    host = RemoteHostFactory(owner=tenancy.owner)
    remote = AgentFactory(owner=tenancy.owner, deploy_target="remote-docker",
                          execution_target_id=host.execution_target_id)
    local = AgentFactory(owner=tenancy.owner)
    for agent in (remote, local):
        WorkspaceAgentFactory(workspace=tenancy.workspace, agent=agent)
    key = client_for(api_key=tenancy.key("agents:read", "agents:write"))

    assert [row["id"] for row in key.get("/api/agents").json()] == [str(local.id)]
    for response in (key.get(f"/api/agents/{remote.id}"), key.post(f"/api/agents/{remote.id}/stop")):
        assert (response.status_code, response.json()["code"]) == (403, "session_required")
    assert {row["id"] for row in client_for(tenancy.owner).get("/api/agents").json()} == {str(remote.id), str(local.id)}
    workspace_agents = f"/api/workspaces/{tenancy.workspace.id}/agents"
    assert [row["agentId"] for row in key.get(workspace_agents).json()] == [str(local.id)]
    assert [row["agentId"] for row in key.get(f"/api/workspaces/{tenancy.workspace.id}/agent-candidates").json()] == [
        str(local.id)]
    relabel = key.post(workspace_agents, {"agentId": str(remote.id), "role": "gpu"}, format="json")
    assert (relabel.status_code, relabel.json()["code"]) == (403, "session_required")
    seen = {row["agentId"] for row in client_for(tenancy.owner).get(workspace_agents).json()}
    assert seen == {str(remote.id), str(local.id)}


def test_the_host_list_and_deploys_are_one_rule_for_every_kind_of_grantee(tenancy):
    """GET /remote-hosts lists exactly the ready hosts a session may deploy to (one selector)."""
    group = user_group_create(name="ssh users", member_ids=[str(tenancy.viewer.pk)])
    hosts = {
        "own": RemoteHostFactory(owner=tenancy.editor),
        "shared": RemoteHostFactory(owner=tenancy.outsider),
        "personal-granted-otherwise": RemoteHostFactory(owner=tenancy.outsider),
        "all-accounts": RemoteHostFactory(owner=None),
        "user": RemoteHostFactory(owner=None),
        "group": RemoteHostFactory(owner=None),
        "workspace": RemoteHostFactory(owner=None),
        "ungranted": RemoteHostFactory(owner=None),
    }
    target_grant_workspace_add(execution_target_id=hosts["shared"].execution_target_id, workspace=tenancy.workspace)
    TargetGrant.objects.create(execution_target_id=hosts["personal-granted-otherwise"].execution_target_id,
                               kind=GranteeKind.ALL_ACCOUNTS)
    grants = {"all-accounts": GrantSet(all_accounts=True), "user": GrantSet(users=(tenancy.admin.pk,)),
              "group": GrantSet(user_groups=(group.pk,)), "workspace": GrantSet(workspaces=(tenancy.workspace.pk,))}
    for name, grant_set in grants.items():
        target_grants_set(execution_target_id=hosts[name].execution_target_id, grants=grant_set)
    expected = {
        "editor": {"own", "shared", "all-accounts", "workspace"},
        "admin": {"shared", "all-accounts", "user", "workspace"},
        "viewer": {"all-accounts", "group"},
        "outsider": {"shared", "personal-granted-otherwise", "all-accounts"},
        "platform_admin": {"all-accounts", "user", "group", "workspace", "ungranted"},
    }

    for who, names in expected.items():
        principal = session(getattr(tenancy, who))
        listed = {name for name, host in hosts.items() if host in remote_hosts_visible(principal)}
        deployable = {name for name, host in hosts.items() if can_deploy_to(principal, host.execution_target_id)}
        assert listed == deployable == names, who
