"""The authorization matrix: every API route of the URLconf and each of its methods (HEAD and
OPTIONS included), called as every kind of principal, answers what ONE table says.

The table (`ACCESS`) is keyed by URL pattern name; each method names a policy, and a policy says,
for every caller, whether access control lets it through ("ok") or refuses it (401, 403, or 404
when the caller may not know the object exists). A route without a row, a method without a
policy, or a URL argument this module cannot fill fails the test: a new route (channels,
integrations, sandbox...) is added here with its row, and with a builder in `URL_ARGUMENTS` for
any new `<uuid:...>` it takes.

Every cell runs against the same world (`World`), inside a savepoint rolled back after each call,
with an empty JSON body: a caller let through may still get a 400, 405, 409 or 429 from the view,
which counts as "ok" (access passed). A 5xx fails the cell whoever calls.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone
from rest_framework.test import APIClient

from alerts.models import AlertRule
from backups.models import Backup, BackupPolicy
from channels.models import LegacyChannel
from channels.services.legacy import legacy_channel_create
from fleet.api.views import ApiView
from integrations.models import Integration
from integrations.services.connections import integration_connect
from llm.services import key_create
from tests.factories.accounts import UserFactory
from tests.factories.agents import make_budget
from tests.factories.alerts import make_rule
from tests.factories.targets import make_cluster
from tests.factories.workspaces import make_api_key, make_member
from tests.support import Tenancy, client_for, url_patterns
from workspaces.models import ApiKey, Invitation, Membership
from workspaces.roles import Role
from workspaces.services import invitation_create, membership_remove

pytestmark = pytest.mark.django_db

OK, UNAUTHENTICATED, FORBIDDEN, HIDDEN = "ok", "401", "403", "404"

SESSIONS = ("outsider", "owner", "admin", "editor", "viewer", "agent_owner", "platform_admin")
SCOPES = ("agents:read", "agents:write", "workspaces:read")
KEYS = tuple(f"key:{s}" for s in SCOPES) + tuple(f"foreign-key:{s}" for s in SCOPES)
# An admin's key (every scope) after the admin was demoted to viewer; an editor's key after the
# editor was removed from the workspace.
CALLERS = ("anonymous", *SESSIONS, *KEYS, "demoted-key", "removed-key")

# The workspace role of each session caller in the matrix's workspace (None: not a member).
SESSION_ROLE = {"outsider": None, "owner": Role.OWNER, "admin": Role.ADMIN, "editor": Role.EDITOR,
                "viewer": Role.VIEWER, "agent_owner": Role.VIEWER, "platform_admin": Role.ADMIN}


def key_scopes(caller: str) -> frozenset[str]:
    """The scopes a key caller may exercise (implied ones included, issuer cap applied)."""
    if caller == "demoted-key":
        return frozenset({"agents:read", "workspaces:read"})  # capped by the issuer's role viewer
    scope = caller.split(":", 1)[1]
    return frozenset({scope, "agents:read"} if scope == "agents:write" else {scope})


def key_issuer_role(caller: str) -> Role:
    return Role.VIEWER if caller == "demoted-key" else Role.OWNER


# -- policies: caller -> expected outcome -------------------------------------------------------

Policy = Callable[[str], str]


def common(caller: str) -> str | None:
    """What every non-public policy answers the same way."""
    if caller in ("anonymous", "removed-key"):
        return UNAUTHENTICATED
    return None


def public(caller: str) -> str:
    return OK


def authenticated(scope: str | None = None) -> Policy:
    """Any session; a key only with `scope` (its own workspace's data), any key without one."""
    def policy(caller):
        if found := common(caller):
            return found
        if caller in SESSIONS:
            return OK
        return OK if scope is None or scope in key_scopes(caller) else FORBIDDEN
    return policy


def session_only(caller: str) -> str:
    return common(caller) or (OK if caller in SESSIONS else FORBIDDEN)


def invitee_only(caller: str) -> str:
    """An invitation to the outsider's email: theirs to accept or decline; any other session may
    not know it exists (404); keys never (403 session_required)."""
    if found := common(caller):
        return found
    if caller in SESSIONS:
        return OK if caller == "outsider" else HIDDEN
    return FORBIDDEN


def workspace(min_role: Role, *, key_scope: str | None = None, keys: bool = True,
              platform_admin: bool = True) -> Policy:
    """workspaces.access.WorkspaceRole: outsiders 404, members below `min_role` 403; keys only in
    their own workspace (others 403 wrong_workspace), with `key_scope` (or a scope role reaching
    `min_role`), never past their issuer's current role; `keys=False`: session only."""
    def policy(caller):
        if found := common(caller):
            return found
        if caller in SESSIONS:
            role = SESSION_ROLE[caller]
            if caller == "platform_admin" and not platform_admin:
                return FORBIDDEN
            if role is None:
                return HIDDEN
            return OK if role >= min_role else FORBIDDEN
        if not keys or caller.startswith("foreign-key"):
            return FORBIDDEN
        scopes = key_scopes(caller)
        if key_scope is not None:
            return OK if key_scope in scopes and key_issuer_role(caller) >= min_role else FORBIDDEN
        role = Role.EDITOR if "agents:write" in scopes else Role.VIEWER
        return OK if role >= min_role else FORBIDDEN
    return policy


def own_llm_key(caller: str) -> str:
    """A user's own model provider key: its owner's session; other sessions never learn it exists."""
    if found := common(caller):
        return found
    if caller not in SESSIONS:
        return FORBIDDEN
    return OK if caller == "owner" else HIDDEN


def agent(min_role: Role) -> Policy:
    """agents.permissions.AgentRole on an agent of `agent_owner` shared into the workspace: the
    direct owner acts as owner, members with their workspace role, keys of that workspace with the
    role their agent scopes give; anyone who may not see the agent gets 404."""
    def policy(caller):
        if found := common(caller):
            return found
        if caller in SESSIONS:
            role = Role.OWNER if caller == "agent_owner" else SESSION_ROLE[caller]
            if role is None:
                return HIDDEN
            return OK if role >= min_role else FORBIDDEN
        scopes = key_scopes(caller)
        role = Role.EDITOR if "agents:write" in scopes else Role.VIEWER if "agents:read" in scopes else None
        if role is None or role < min_role:
            return FORBIDDEN  # missing_scope, before any lookup
        return HIDDEN if caller.startswith("foreign-key") else OK
    return policy


def agent_session_only(min_role: Role) -> Policy:
    """Session-only agent routes (files, export): every key 403 session_required before any
    lookup, sessions as agent(min_role)."""
    def policy(caller):
        if found := common(caller):
            return found
        return agent(min_role)(caller) if caller in SESSIONS else FORBIDDEN
    return policy


def backups_reader(caller: str) -> str:
    """backups.permissions.BackupReader: sessions need editor on the agent, keys agents:read."""
    return agent(Role.EDITOR if caller in SESSIONS else Role.VIEWER)(caller)


def platform_admin_only(caller: str) -> str:
    """fleet.api.permissions.PlatformAdminOnly: keys 403 session_required, sessions other than a
    platform admin's 403."""
    if found := common(caller):
        return found
    return OK if caller == "platform_admin" else FORBIDDEN


def agent_owner_only(caller: str) -> str:
    """Deleting an agent: its direct owner only (a key of the owner's, inside its workspace)."""
    found = agent(Role.EDITOR)(caller)
    if found != OK:
        return found
    return OK if caller == "agent_owner" else FORBIDDEN


def remote_host(*, manage: bool) -> Policy:
    """A personal Remote Docker host of the workspace's owner, shared with the workspace: every key
    403 session_required before any lookup; its owner may do everything; the workspace's editors
    and admins may read it (403 on managing); everyone else 404, platform admins too (a personal
    host is not theirs)."""
    def policy(caller):
        if found := common(caller):
            return found
        if caller not in SESSIONS:
            return FORBIDDEN
        if caller == "owner":
            return OK
        if caller in ("admin", "editor"):
            return FORBIDDEN if manage else OK
        return HIDDEN
    return policy


# -- THE table: URL pattern name -> method -> policy ---------------------------------------------

ACCESS: dict[str, dict[str, Policy]] = {
    "health": {"GET": public},
    "auth-bootstrap-status": {"GET": public},
    "auth-signup": {"POST": public},
    "auth-login": {"POST": public},
    "auth-oauth-login": {"POST": public},
    "auth-logout": {"POST": public},
    "auth-me": {"GET": session_only},
    "auth-profile": {"PATCH": session_only},
    "auth-password": {"PATCH": session_only},
    "auth-session-upgrade": {"POST": session_only},
    "workspace-list": {"GET": authenticated("workspaces:read"), "POST": session_only},
    "workspace-cost": {"GET": authenticated("workspaces:read")},
    "workspace-detail": {
        "GET": workspace(Role.VIEWER, key_scope="workspaces:read"),
        "DELETE": workspace(Role.OWNER, keys=False),
    },
    "workspace-member-list": {
        "GET": workspace(Role.VIEWER, key_scope="workspaces:read"),
        "POST": workspace(Role.ADMIN, keys=False),
    },
    "workspace-member-detail": {
        "PATCH": workspace(Role.ADMIN, keys=False),
        # Any member may leave (the route admits viewers); removing another, the target here, needs admin.
        "DELETE": workspace(Role.ADMIN, keys=False),
    },
    "workspace-invitation-list": {"GET": workspace(Role.ADMIN, keys=False)},
    "workspace-invitation-detail": {"DELETE": workspace(Role.ADMIN, keys=False)},
    "invitation-list": {"GET": session_only},
    "invitation-detail": {"DELETE": invitee_only},
    "invitation-accept": {"POST": invitee_only},
    "workspace-api-key-list": {"GET": workspace(Role.ADMIN, keys=False), "POST": workspace(Role.ADMIN, keys=False)},
    "workspace-api-key-detail": {"DELETE": workspace(Role.ADMIN, keys=False)},
    "workspace-agent-list": {
        "GET": workspace(Role.VIEWER, key_scope="agents:read"),
        "POST": workspace(Role.EDITOR, key_scope="agents:write"),
    },
    "workspace-agent-candidates": {"GET": workspace(Role.EDITOR, key_scope="agents:write")},
    "workspace-agent-detail": {"DELETE": workspace(Role.ADMIN)},
    "alert-rules": {
        "GET": workspace(Role.VIEWER, key_scope="agents:read"),
        "POST": workspace(Role.ADMIN, key_scope="agents:write"),
    },
    "alert-rule": {
        "PATCH": workspace(Role.ADMIN, key_scope="agents:write"),
        "DELETE": workspace(Role.ADMIN, key_scope="agents:write"),
    },
    "alert-rule-test": {"POST": workspace(Role.ADMIN, key_scope="agents:write")},
    "workspace-events": {"GET": workspace(Role.VIEWER, key_scope="agents:read")},
    "workspace-audit": {"GET": workspace(Role.ADMIN, keys=False)},
    "audit-list": {"GET": platform_admin_only},
    "agent-list": {"GET": authenticated("agents:read")},
    "agent-deploy": {"POST": authenticated("agents:write")},
    "agent-adopt": {"POST": authenticated("agents:write")},
    "agent-detail": {"GET": agent(Role.VIEWER), "DELETE": agent_owner_only},
    "agent-start": {"POST": agent(Role.EDITOR)},
    "agent-stop": {"POST": agent(Role.EDITOR)},
    "agent-restart": {"POST": agent(Role.EDITOR)},
    "agent-redeploy": {"POST": agent(Role.EDITOR)},
    "agent-gateway-url": {"GET": agent(Role.VIEWER)},
    "agent-stats": {"GET": agent(Role.VIEWER)},
    "agent-stats-history": {"GET": agent(Role.VIEWER)},
    "agent-logs": {"GET": agent(Role.VIEWER)},  # as for stats: viewer, keys with agents:read
    # Talking to an agent and reading what was said: editors, keys with agents:write.
    "agent-chat": {"POST": agent(Role.EDITOR)},
    "agent-chat-sessions": {"GET": agent(Role.EDITOR)},
    "agent-chat-messages": {"GET": agent(Role.EDITOR)},
    "agent-gateway-session": {"POST": agent(Role.EDITOR)},  # a link into the agent's own UI
    "agent-usage": {"POST": agent(Role.EDITOR)},
    "agent-usage-pull": {"POST": agent(Role.EDITOR)},
    "agent-budget": {"GET": agent(Role.VIEWER), "PUT": agent(Role.EDITOR)},
    "agent-budget-detail": {"DELETE": agent(Role.EDITOR)},
    "agent-model": {"GET": agent(Role.VIEWER), "PUT": agent(Role.EDITOR), "DELETE": agent(Role.EDITOR)},
    "agent-model-gateway": {"GET": agent(Role.VIEWER), "PUT": agent(Role.EDITOR)},
    "agent-model-gateway-traffic": {"GET": agent(Role.VIEWER)},
    "auth-provider-key": {"PUT": session_only, "DELETE": session_only},
    # Channels (the world's agent is an OpenClaw agent: legacy-only routes answer 409 past access).
    "agent-channels": {"GET": agent(Role.VIEWER), "POST": agent(Role.EDITOR)},
    "agent-channel-type": {"GET": agent(Role.VIEWER)},
    "agent-channel-detail": {"PATCH": agent(Role.EDITOR), "DELETE": agent(Role.EDITOR)},
    "agent-channel-connect": {"POST": agent(Role.EDITOR)},
    "agent-channel-login": {"POST": agent(Role.EDITOR)},
    "agent-channel-login-wait": {"POST": agent(Role.EDITOR)},
    "agent-channel-logout": {"POST": agent(Role.EDITOR)},
    "agent-channel-test": {"POST": agent(Role.EDITOR)},
    "agent-channel-messages": {"GET": agent(Role.VIEWER)},
    "channel-webhook": {"POST": public},
    # Integrations.
    "integration-catalog": {"GET": authenticated()},
    "integration-oauth-result": {"GET": public},
    "integration-oauth-callback": {"GET": public},
    "agent-integrations": {"GET": agent(Role.VIEWER), "POST": agent(Role.EDITOR)},
    "agent-integrations-sync": {"POST": agent(Role.EDITOR)},
    "agent-integration-oauth-start": {"POST": agent(Role.EDITOR)},
    "agent-integration": {"PATCH": agent(Role.EDITOR), "DELETE": agent(Role.EDITOR)},
    "agent-integration-test": {"POST": agent(Role.EDITOR)},
    # Model providers and keys: a user's own keys (sessions; the world's key is the owner's), the
    # workspace's (members read, keys with workspaces:read too; editors test; admins write).
    "llm-providers": {"GET": authenticated()},
    "llm-keys": {"GET": session_only, "POST": session_only},
    "llm-key": {"PATCH": own_llm_key, "DELETE": own_llm_key},
    "llm-key-test": {"POST": own_llm_key},
    "workspace-llm-keys": {"GET": workspace(Role.VIEWER, key_scope="workspaces:read"),
                           "POST": workspace(Role.ADMIN, keys=False)},
    "workspace-llm-key": {"PATCH": workspace(Role.ADMIN, keys=False), "DELETE": workspace(Role.ADMIN, keys=False)},
    "workspace-llm-key-test": {"POST": workspace(Role.EDITOR, keys=False)},
    # Sandbox (the world's agent is not sandboxed: callers let through get 400 not_sandboxed).
    "sandbox-status": {"GET": agent(Role.VIEWER)},
    "sandbox-policy": {"GET": agent(Role.VIEWER), "POST": agent(Role.EDITOR)},
    "sandbox-approvals": {"GET": agent(Role.VIEWER)},
    "sandbox-approval-decision": {"POST": agent(Role.EDITOR)},
    # Files, export and migration (the world's agent has no container: callers let through get
    # 409/400 no_container; a migration without a bundle 400).
    "agent-files-root": {"GET": agent_session_only(Role.VIEWER)},
    "agent-files": {"GET": agent_session_only(Role.VIEWER), "PUT": agent_session_only(Role.EDITOR),
                    "DELETE": agent_session_only(Role.EDITOR)},
    "agent-export": {"GET": agent_session_only(Role.EDITOR)},
    # A terminal's ticket: sessions of the agent's owner, a workspace admin or owner, a platform admin
    # (the world's agent is stopped: callers let through get 409 agent_not_running).
    "agent-terminal-session": {"POST": agent_session_only(Role.ADMIN)},
    "agent-migrations": {"POST": session_only},
    # Backups: editors (sessions), keys by scope (agents:read reads); restoring is session only.
    # The world's agent has no container: a backup asked for is 400 no_container; a restore
    # without a body 400.
    "agent-backup-policy": {"GET": backups_reader, "PUT": agent(Role.EDITOR), "DELETE": agent(Role.EDITOR)},
    "agent-backups": {"GET": backups_reader, "POST": agent(Role.EDITOR)},
    "agent-backup-restore": {"POST": agent_session_only(Role.EDITOR)},
    # Registered targets: the Kubernetes cluster registry and the Proxmox target (platform admins;
    # the world's cluster points at a closed port, so its test answers ok=false quickly).
    "admin-k8s-clusters": {"GET": platform_admin_only, "POST": platform_admin_only},
    "admin-k8s-cluster": {"GET": platform_admin_only, "PATCH": platform_admin_only, "DELETE": platform_admin_only},
    "admin-k8s-cluster-test": {"POST": platform_admin_only},
    "admin-proxmox": {"GET": platform_admin_only, "PATCH": platform_admin_only},
    "admin-proxmox-test": {"POST": platform_admin_only},
    # User groups and registered targets.
    "admin-user-group-list": {"GET": platform_admin_only, "POST": platform_admin_only},
    "admin-user-group-detail": {"GET": platform_admin_only, "PATCH": platform_admin_only,
                                "DELETE": platform_admin_only},
    "admin-user-group-member-list": {"GET": platform_admin_only, "POST": platform_admin_only},
    "admin-user-group-member-detail": {"DELETE": platform_admin_only},
    "remote-host-list": {"GET": session_only, "POST": session_only},
    "remote-host-detail": {"GET": remote_host(manage=False), "PATCH": remote_host(manage=True),
                           "DELETE": remote_host(manage=True)},
    "remote-host-test": {"POST": remote_host(manage=True)},
    "remote-host-share": {"POST": remote_host(manage=True), "DELETE": remote_host(manage=True)},
    "admin-remote-host-list": {"GET": platform_admin_only, "POST": platform_admin_only},
    "admin-remote-host-detail": {"GET": platform_admin_only, "PATCH": platform_admin_only,
                                 "DELETE": platform_admin_only},
    "admin-remote-host-test": {"POST": platform_admin_only},
}


# -- the world every cell runs in -----------------------------------------------------------------


@dataclass
class World:
    tenancy: Tenancy
    agent: object
    member: object  # a viewer no caller is, the target of member routes
    key: ApiKey
    rule: AlertRule
    budget: object
    legacy_channel: LegacyChannel  # of a Hermes agent of the same owner, receiving webhooks
    integration: Integration
    invitation: Invitation  # to the outsider's email
    clients: dict[str, APIClient]

    @classmethod
    def build(cls) -> World:
        t = Tenancy.create()
        agent = t.agent()
        member = make_member(t.workspace, Role.VIEWER, UserFactory())
        key, _ = make_api_key(workspace=t.workspace, scopes=["agents:read"])
        rule = make_rule(workspace=t.workspace, channels=[{"type": "email", "to": ["ops@example.com"]}])
        budget = make_budget(agent)
        BackupPolicy.objects.create(agent=agent, schedule="0 3 * * *", keep=1, next_run_at=timezone.now())
        hermes = t.agent(runtime_family="hermes")
        legacy_channel = legacy_channel_create(agent=hermes, type_="telegram", config={"botToken": "123:matrix"})
        integration = integration_connect(agent=agent, provider="github", config={"token": "ghp_matrix0000"})
        invitation = invitation_create(workspace=t.workspace, invited_by=t.owner, acting_role=Role.OWNER,
                                       email=t.outsider.email, role=Role.VIEWER)
        clients = {"anonymous": client_for()}
        clients.update({name: client_for(getattr(t, name)) for name in SESSIONS})
        for scope in SCOPES:
            clients[f"key:{scope}"] = client_for(api_key=t.key(scope))
            clients[f"foreign-key:{scope}"] = client_for(api_key=t.key(scope, workspace=t.other_workspace))
        demoted = make_api_key(workspace=t.workspace, scopes=SCOPES, created_by=t.admin)[1]
        Membership.objects.filter(workspace=t.workspace, user=t.admin).update(role=Role.VIEWER.label)
        removed_issuer = make_member(t.workspace, Role.EDITOR, UserFactory())
        removed = make_api_key(workspace=t.workspace, scopes=SCOPES, created_by=removed_issuer)[1]
        membership_remove(membership=Membership.objects.get(workspace=t.workspace, user=removed_issuer),
                          acting_user=t.owner, acting_role=Role.OWNER)
        clients["demoted-key"] = client_for(api_key=demoted)
        clients["removed-key"] = client_for(api_key=removed)
        # The demoted admin's session is a viewer's now; the matrix's "admin" is a real admin.
        t.admin = make_member(t.workspace, Role.ADMIN, UserFactory())
        clients["admin"] = client_for(t.admin)
        return cls(t, agent, member, key, rule, budget, legacy_channel, integration, invitation, clients)


# Each <converter:name> of a route and the object of the world it names (its id, or the string the
# route takes: a channel id, a provider name...). A new one needs a builder; an object a caller let
# through must exist, or its 404 reads as "hidden".
URL_ARGUMENTS: dict[str, Callable[[World], object]] = {
    "workspace_id": lambda w: w.tenancy.workspace.id,
    "agent_id": lambda w: w.agent.id,
    "user_id": lambda w: w.member.id,
    "key_id": lambda w: w.key.id,
    "rule_id": lambda w: w.rule.id,
    "budget_id": lambda w: w.budget.id,
    "cid": lambda w: "telegram",
    "type_": lambda w: "telegram",
    "channel_id": lambda w: w.legacy_channel.id,
    "provider": lambda w: "twitter",
    "integration_id": lambda w: w.integration.id,
    "invitation_id": lambda w: w.invitation.id,
    "request_id": lambda w: "matrix-request",
    "path": lambda w: "workspace/notes.md",
    "cluster_id": lambda w: make_cluster().id,
    "group_id": lambda w: matrix_user_group(w).id,
    "host_id": lambda w: matrix_remote_host(w, personal=True).id,
    "session_id": lambda w: "agent:main:matrix",
    "llm_key_id": lambda w: matrix_llm_key(w, own=False).id,
    "backup_id": lambda w: Backup.objects.create(agent=w.agent, trigger="manual", status="completed",
                                                 object_key="matrix.tar.gz").id,
}
# Where one route's argument names something else than the same name elsewhere.
ROUTE_ARGUMENTS: dict[tuple[str, str], Callable[[World], object]] = {
    ("auth-provider-key", "provider"): lambda w: "nvidia",
    ("llm-key", "llm_key_id"): lambda w: matrix_llm_key(w, own=True).id,
    ("llm-key-test", "llm_key_id"): lambda w: matrix_llm_key(w, own=True).id,
    ("admin-remote-host-detail", "host_id"): lambda w: matrix_remote_host(w, personal=False).id,
    ("admin-remote-host-test", "host_id"): lambda w: matrix_remote_host(w, personal=False).id,
}


def matrix_llm_key(world: World, *, own: bool):
    """A model provider key of the workspace's owner, or of the workspace; its base URL a closed
    loopback port, refused by the outbound rule at once (a test answers ok=false)."""
    owner = {"user": world.tenancy.owner} if own else {"workspace": world.tenancy.workspace}
    return key_create(provider="openai", label="matrix", api_key="sk-matrix-0000", base_url=None,
                      created_by=world.tenancy.owner, **owner)


def matrix_user_group(world: World):
    """A user group holding the world's `member` (its member routes name them)."""
    from accounts.groups import user_group_create

    return user_group_create(name="matrix group", member_ids=[str(world.member.id)])


def matrix_remote_host(world: World, *, personal: bool):
    """A Remote Docker host at a documentation address (a connection test is refused at once):
    personal, of the workspace's owner and shared with the workspace; or a platform host."""
    from agents.targets.grants import target_grant_workspace_add
    from tests.factories.remote_hosts import RemoteHostFactory

    host = RemoteHostFactory(owner=world.tenancy.owner if personal else None)
    if personal:
        target_grant_workspace_add(execution_target_id=host.execution_target_id, workspace=world.tenancy.workspace)
    return host


def api_routes() -> list[tuple[str, str, type[ApiView]]]:
    """(name, route, view class) of every ApiView under /api/ in the URLconf."""
    routes = []
    for route, pattern in url_patterns():
        view = getattr(pattern.callback, "view_class", None)
        if route.startswith("api/") and view and issubclass(view, ApiView):
            routes.append((pattern.name, route, view))
    return routes


def cells() -> list[tuple[str, str]]:
    out = []
    for name, _, view in api_routes():
        for method in (*sorted(view.access), "HEAD", "OPTIONS"):
            out.append((name, method))
    return out


# The codes of 403s that refuse the caller; others (oauth_login_disabled...) are the route's answer.
ACCESS_DENIALS = {"permission_denied", "missing_scope", "wrong_workspace", "session_required", "csrf_failed"}


def code_of(response) -> str | None:
    """The error code of a JSON error body; None without one (HEAD answers have no body)."""
    if not response.content or not response.get("Content-Type", "").startswith("application/json"):
        return None
    body = response.json()
    return body.get("code") if isinstance(body, dict) else None


def outcome(response) -> str:
    if response.status_code >= 500:
        return f"{response.status_code} (server error)"
    if response.status_code == 401 and code_of(response) != "invalid_signature":
        return UNAUTHENTICATED  # (a provider's missing signature on a public webhook is the route's answer)
    if response.status_code == 403 and code_of(response) in (*ACCESS_DENIALS, None):
        return FORBIDDEN
    if response.status_code == 404 and code_of(response) in ("not_found", None):
        return HIDDEN
    return OK


def reading_method(view: type[ApiView]) -> str:
    return "GET" if "GET" in view.access else next(iter(view.access))


def test_every_route_and_method_has_a_row_in_the_table():
    routes = api_routes()
    names = [name for name, _, _ in routes]
    assert len(names) == len(set(names)), "two API routes share a URL pattern name"
    missing = [(name, sorted(view.access)) for name, _, view in routes if name not in ACCESS]
    assert not missing, f"routes without a row in ACCESS: {missing}"
    for name, route, view in routes:
        assert set(ACCESS[name]) == set(view.access), f"{name}: the row's methods differ from the view's"
        unknown = [arg for arg in view_arguments(route) if arg not in URL_ARGUMENTS]
        assert not unknown, f"{name}: add a builder to URL_ARGUMENTS for {unknown}"
    stale = set(ACCESS) - set(names)
    assert not stale, f"rows for routes that no longer exist: {stale}"


def url_argument(name: str, argument: str) -> Callable[[World], object]:
    return ROUTE_ARGUMENTS.get((name, argument)) or URL_ARGUMENTS[argument]


def view_arguments(route: str) -> list[str]:
    return re.findall(r"<(?:\w+:)?(\w+)>", route)


@pytest.mark.parametrize(("name", "method"), cells())
def test_each_caller_gets_what_the_table_says(name, method):
    view_of = {n: (route, view) for n, route, view in api_routes()}
    route, view = view_of[name]
    policy = ACCESS[name].get(method) or ACCESS[name][reading_method(view)]
    world = World.build()
    url = "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(url_argument(name, m.group(1))(world)), route)

    mismatches = []
    for caller in CALLERS:
        cache.clear()  # throttles count per test: each caller starts with a fresh window
        with transaction.atomic():
            client = world.clients[caller]
            response = client.generic(method, url, data="{}" if method not in ("GET", "HEAD") else "",
                                      content_type="application/json")
            transaction.set_rollback(True)
        got, expected = outcome(response), policy(caller)
        if got != expected:
            mismatches.append(f"{caller}: expected {expected}, got {response.status_code} "
                              f"{response.content[:120]!r}")
    assert not mismatches, f"{method} {url}:\n  " + "\n  ".join(mismatches)
