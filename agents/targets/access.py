"""THE deploy-access rule of every registered target (contract: POST /agents/deploy rules (2)
and (3), "Authentication" 5; docs/api.md "Registered targets"). Deploy validation, the host listings and the
k8s/proxmox registries all ask here; nothing else decides who may place an agent where.

- `docker` (the built-in engine) is open to every caller allowed to deploy at all.
- Everything Remote Docker is session-only: a workspace API key gets 403 session_required
  before any lookup (`require_session_for_target`, also used for existing agents).
- A personal Remote Docker host: its owner, and members with `editor` or above of workspaces
  it is shared with (workspace grants). A workspace viewer never deploys; platform admins get
  no special right on someone else's machine.
- A platform target (`k8s:<id>`, `proxmox`, a platform `remote:<id>`): a platform admin
  session, an all-accounts grant, a grant to the user, to a user group they belong to, or to a
  workspace where they are `editor` or above. A key acts for its issuer (all-accounts, user
  and group grants) and inside its own workspace only (that workspace's grant, with
  agents:write, while its issuer is still editor or above there).
- A Remote Docker host must also have passed its connection test (`ready`).
"""

from __future__ import annotations

from uuid import UUID

from django.db.models import Q

from fleet.api.fields import uuid_or_none
from fleet.api.principal import Principal
from fleet.errors import SessionRequired
from workspaces.models import Membership
from workspaces.roles import Role, Scope

from ..backends import registry
from .k8s_clusters import K8sCluster
from .models import GranteeKind, HostStatus, RemoteHost, TargetGrant, remote_host_of

DEPLOYING_ROLES = tuple(role.label for role in Role if role >= Role.EDITOR)
# The same words as an id naming nothing (agents.services.selection): a refusal must not tell
# whether someone else's cluster or host exists.
INACCESSIBLE = "The target '{}' is unknown or unavailable."


def _kind(execution_target_id: str) -> str:
    return (execution_target_id or "").partition(":")[0]


def is_session_only(*, deploy_target: str | None = None, execution_target_id: str | None = None) -> bool:
    """Whether a deploy target family or an execution target id is session-only (Remote Docker)."""
    if execution_target_id and registry.deploy_target_of(execution_target_id) in registry.SESSION_ONLY_DEPLOY_TARGETS:
        return True
    return deploy_target in registry.SESSION_ONLY_DEPLOY_TARGETS


def hidden_deploy_targets(principal: Principal) -> tuple[str, ...]:
    """Deploy targets whose agents `principal` never sees, even assigned to its workspace: a
    key sees no session-only (Remote Docker) agent in any list or report."""
    return registry.SESSION_ONLY_DEPLOY_TARGETS if principal.is_api_key else ()


def require_session_for_target(principal: Principal, *, deploy_target: str | None = None,
                               execution_target_id: str | None = None) -> None:
    """403 session_required for a workspace API key on anything Remote Docker: the one place
    this rule lives (deploy, existing agents, host routes)."""
    if principal.is_api_key and is_session_only(deploy_target=deploy_target, execution_target_id=execution_target_id):
        raise SessionRequired("Remote Docker is session-only; workspace API keys are refused.")


def _deploying_workspaces(principal: Principal, workspace=None) -> list[UUID]:
    """Workspaces where the caller may deploy through a workspace grant: a session's workspaces
    where it is editor or above; a key's own workspace while it has agents:write and its issuer
    is editor or above there. `workspace` narrows to that one."""
    only = getattr(workspace, "pk", workspace)
    if principal.is_api_key:
        issuer = Role.parse(principal.issuer_role) if principal.issuer_role else None
        if Scope.AGENTS_WRITE not in principal.scopes or issuer is None or issuer < Role.EDITOR:
            return []
        if only is not None and only != principal.workspace_id:
            return []
        return [principal.workspace_id]
    memberships = Membership.objects.filter(user_id=principal.user.pk, role__in=DEPLOYING_ROLES)
    if only is not None:
        memberships = memberships.filter(workspace_id=only)
    return list(memberships.values_list("workspace_id", flat=True))


def _grant_filter(principal: Principal, workspace=None, *, personal: bool) -> Q:
    """The grants that let the caller deploy. A personal host is shared with workspaces only."""
    by_workspace = Q(kind=GranteeKind.WORKSPACE, workspace_id__in=_deploying_workspaces(principal, workspace))
    if personal:
        return by_workspace
    return (
        by_workspace
        | Q(kind=GranteeKind.ALL_ACCOUNTS)
        | Q(kind=GranteeKind.USER, user_id=principal.user.pk)
        | Q(kind=GranteeKind.USER_GROUP, group__memberships__user_id=principal.user.pk)
    )


def usable_grants(principal: Principal, *, personal: bool, workspace=None):
    """THE grant selector: the grants through which the caller may deploy (of a personal host:
    its workspace shares only). Every question about grants builds on this queryset."""
    return TargetGrant.objects.filter(_grant_filter(principal, workspace, personal=personal))


def _granted(principal: Principal, execution_target_id: str, workspace=None, *, personal: bool) -> bool:
    return usable_grants(principal, personal=personal, workspace=workspace).filter(
        execution_target_id=execution_target_id).exists()


def _remote_host_ids(grants) -> list[UUID]:
    target_ids = grants.filter(execution_target_id__startswith="remote:").values_list("execution_target_id", flat=True)
    return [uuid for uuid in (uuid_or_none(value.partition(":")[2]) for value in target_ids) if uuid]


def usable_remote_hosts(principal: Principal, *, workspace=None) -> Q:
    """The Remote Docker hosts the caller may use, whatever their status, as a filter on
    RemoteHost: its own hosts, personal hosts shared with a workspace where it is editor or above,
    and platform hosts granted to it (every platform host for a platform admin). GET
    /remote-hosts lists these; deploy_refusal also wants the host `ready`."""
    shared = _remote_host_ids(usable_grants(principal, personal=True, workspace=workspace))
    personal = Q(owner_id=principal.user.pk) | Q(owner__isnull=False, pk__in=shared)
    if principal.is_platform_admin:
        return personal | Q(owner__isnull=True)
    granted = _remote_host_ids(usable_grants(principal, personal=False, workspace=workspace))
    return personal | Q(owner__isnull=True, pk__in=granted)


def deploy_refusal(principal: Principal, execution_target_id: str, *, workspace=None) -> str | None:
    """Why the caller may not deploy to `execution_target_id` now, or None when it may.
    Keys are refused Remote Docker by `require_session_for_target`, which callers run first."""
    kind = _kind(execution_target_id)
    if kind in registry.OPEN_KINDS:
        return None
    if kind in registry.PERSONAL_KINDS:
        if principal.is_api_key:
            return INACCESSIBLE.format(execution_target_id)
        host = remote_host_of(execution_target_id)
        usable = host is not None and RemoteHost.objects.filter(
            usable_remote_hosts(principal, workspace=workspace), pk=host.pk).exists()
        if not usable:
            return INACCESSIBLE.format(execution_target_id)
        if host.status != HostStatus.READY:
            return f"The host '{host.name}' has not passed a connection test ({host.status}); test it first."
        return None
    if principal.is_platform_admin or _granted(principal, execution_target_id, workspace, personal=False):
        return None
    return INACCESSIBLE.format(execution_target_id)


def can_deploy_to(principal: Principal, execution_target_id: str, *, workspace=None) -> bool:
    """Whether the caller may deploy to this execution target (see the module's rules)."""
    if principal.is_api_key and is_session_only(execution_target_id=execution_target_id):
        return False
    return deploy_refusal(principal, execution_target_id, workspace=workspace) is None


def _instances(kind: str) -> list[str]:
    target = registry.TARGETS.get(kind)
    instances = getattr(target, "instances", None)
    return list(instances()) if instances else []


def deployable_targets(principal: Principal, *, workspace=None) -> list[str]:
    """Every execution target id the caller may deploy to now (registered here), sorted."""
    found = {kind for kind in registry.OPEN_KINDS if registry.is_registered(kind)}
    # Platform targets: granted ones, or every instance for a platform admin.
    granted = usable_grants(principal, personal=False, workspace=workspace)
    candidates = set(granted.values_list("execution_target_id", flat=True))
    if principal.is_platform_admin:
        for kind in registry.TARGETS:
            if kind not in registry.OPEN_KINDS:
                candidates.update(_instances(kind))
    if principal.is_session:
        owned = RemoteHost.objects.filter(owner_id=principal.user.pk).values_list("id", flat=True)
        candidates.update(f"remote:{host_id}" for host_id in owned)
    for target_id in candidates:
        if not registry.is_registered(target_id):
            continue
        if can_deploy_to(principal, target_id, workspace=workspace):
            found.add(target_id)
    return sorted(found)


def target_label(execution_target_id: str) -> str:
    """An execution target as people call it: the cluster's or host's name beside its id."""
    kind, _, concrete = execution_target_id.partition(":")
    name = None
    if kind in registry.PERSONAL_KINDS:
        host = remote_host_of(execution_target_id)
        name = host and host.name
    elif concrete:
        cluster = K8sCluster.objects.filter(pk=uuid_or_none(concrete)).first()
        name = cluster and cluster.name
    return f"{name} ({execution_target_id})" if name else execution_target_id
