"""Reads of agents with their access rules: who may see an agent, and with which role.

An agent is visible to its direct owner, to members of every workspace it is assigned to,
and to platform admins. A workspace API key sees only agents assigned to its bound workspace,
with the role its scopes give (agents:read viewer, agents:write editor), never more.

Effective role: `owner` for the direct owner; otherwise the highest role among the assigned
workspaces where the caller is a member; a platform admin gets at least `admin`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from uuid import UUID

from django.db.models import Exists, OuterRef, Q, QuerySet

from fleet.api.errors import Forbidden, MissingScope, NotFound, SessionRequired
from fleet.api.principal import Principal
from workspaces.access import workspace_roles
from workspaces.models import Workspace
from workspaces.roles import Role, Scope

from .models import Agent, DeployTarget, WorkspaceAgent

AGENT_NOT_FOUND = "Agent not found."

# The columns of GET /agents, read as plain values (no model instances per row).
LIST_COLUMNS = (
    "id",
    "name",
    "status",
    "runtime_family",
    "deploy_target",
    "sandbox_profile",
    "vcpu",
    "ram_mb",
    "disk_gb",
    "node",
    "container_id",
    "paused_reason",
    "created_at",
    "owner_id",
)


@dataclass(frozen=True)
class AgentAccess:
    agent: Agent
    role: Role
    is_direct_owner: bool


def key_agent_role(principal: Principal) -> Role | None:
    """The role a workspace API key acts with on agents: from its agent scopes only."""
    if Scope.AGENTS_WRITE in principal.scopes:
        return Role.EDITOR
    if Scope.AGENTS_READ in principal.scopes:
        return Role.VIEWER
    return None


def require_agent_scope(principal: Principal, min_role: Role = Role.VIEWER) -> None:
    """Keys need agents:read to read agents and agents:write to operate them (403 missing_scope)."""
    if not principal.is_api_key:
        return
    role = key_agent_role(principal)
    if role is None or role < min_role:
        needed = Scope.AGENTS_WRITE if min_role >= Role.EDITOR else Scope.AGENTS_READ
        raise MissingScope(f"The API key lacks the scope '{needed}'.")


def _parse_uuid(value) -> UUID | None:
    try:
        return value if isinstance(value, UUID) else UUID(str(value))
    except (TypeError, ValueError, AttributeError):
        return None


def _visible_agents(principal: Principal, *, owned_only: bool = False) -> QuerySet[Agent]:
    """The agents a principal may see (before any role check), as a queryset."""
    user_id = principal.user.pk
    if principal.is_api_key:
        in_key_workspace = WorkspaceAgent.objects.filter(agent_id=OuterRef("pk"), workspace_id=principal.workspace_id)
        agents = Agent.objects.filter(Exists(in_key_workspace))
        return agents.filter(owner_id=user_id) if owned_only else agents
    if owned_only:
        return Agent.objects.filter(owner_id=user_id)
    if principal.is_platform_admin:
        return Agent.objects.all()
    shared = WorkspaceAgent.objects.filter(agent_id=OuterRef("pk"), workspace__memberships__user_id=user_id)
    return Agent.objects.filter(Q(owner_id=user_id) | Q(Exists(shared)))


def _effective_role(
    principal: Principal, *, owner_id, assigned_workspace_ids, roles: dict[UUID, Role]
) -> Role | None:
    if principal.is_api_key:
        return key_agent_role(principal) if principal.workspace_id in assigned_workspace_ids else None
    if owner_id == principal.user.pk:
        return Role.OWNER
    best = max((roles[w] for w in assigned_workspace_ids if w in roles), default=None)
    if principal.is_platform_admin:
        return max(best or Role.ADMIN, Role.ADMIN)
    return best


def _listed_assignments(principal: Principal, *, roles: dict[UUID, Role], owned_only: bool) -> QuerySet:
    """The assignments GET /agents shows: those in workspaces the caller may see. Every agent
    assigned to such a workspace is visible to the caller, so no join on agents is needed."""
    assignments = WorkspaceAgent.objects.all()
    if principal.is_api_key:
        assignments = assignments.filter(workspace_id=principal.workspace_id)
    elif not principal.is_platform_admin:
        assignments = assignments.filter(workspace_id__in=list(roles))
    if owned_only:
        assignments = assignments.filter(agent__owner_id=principal.user.pk)
    return assignments


def agent_list(principal: Principal, *, scope: str = "accessible") -> list[dict]:
    """GET /agents: newest first, each row with isDirectOwner, effectiveRole and workspaces[].

    Three queries whatever the number of agents or workspaces: the caller's roles, the agent
    rows, and the assignments of those agents to workspaces the caller may see.
    """
    require_agent_scope(principal)
    roles = workspace_roles(principal)
    agents = _visible_agents(principal, owned_only=scope == "owned")
    rows = list(agents.order_by("-created_at", "-id").values(*LIST_COLUMNS))
    if not rows:
        return []

    assignments = _listed_assignments(principal, roles=roles, owned_only=scope == "owned")
    by_agent: dict[UUID, list[dict]] = defaultdict(list)
    best_role: dict[UUID, Role] = {}  # the caller's highest workspace role per agent
    for agent_id, workspace_id, workspace_name, label in assignments.order_by("workspace__name").values_list(
        "agent_id", "workspace_id", "workspace__name", "role"
    ):
        by_agent[agent_id].append({"id": workspace_id, "name": workspace_name, "role": label})
        role = roles.get(workspace_id)
        if role is not None and role > best_role.get(agent_id, 0):
            best_role[agent_id] = role

    # Per row only dictionary look-ups: this loop runs once per agent (1,000 and more).
    user_id = principal.user.pk
    key_role = key_agent_role(principal) if principal.is_api_key else None
    admin_floor = Role.ADMIN if principal.is_platform_admin else None
    labels = {role: role.label for role in Role}
    empty: list = []
    for row in rows:
        agent_id = row["id"]
        is_owner = row.pop("owner_id") == user_id
        if key_role is not None:
            role = key_role
        elif is_owner:
            role = Role.OWNER
        else:
            role = best_role.get(agent_id)
            if admin_floor is not None and (role is None or role < admin_floor):
                role = admin_floor
        row["sandbox_type"] = row["sandbox_profile"]
        row["isDirectOwner"] = is_owner
        row["effectiveRole"] = labels[role] if role is not None else None
        row["workspaces"] = by_agent.get(agent_id, empty)
    return rows


def agent_access(principal: Principal, agent_id, *, min_role: Role = Role.VIEWER) -> AgentAccess:
    """The agent and the caller's role on it, or 404 (not visible) / 403 (role too low).

    Keys: 403 missing_scope when their scopes cannot reach `min_role`; 404 for agents outside
    their workspace; 403 session_required on Remote Docker agents (session-only).
    """
    require_agent_scope(principal, min_role)
    agent_uuid = _parse_uuid(agent_id)
    agent = Agent.objects.filter(pk=agent_uuid).first() if agent_uuid else None
    if agent is None:
        raise NotFound(AGENT_NOT_FOUND)
    assigned = set(WorkspaceAgent.objects.filter(agent_id=agent.pk).values_list("workspace_id", flat=True))
    roles = workspace_roles(principal) if principal.is_session and agent.owner_id != principal.user.pk else {}
    role = _effective_role(principal, owner_id=agent.owner_id, assigned_workspace_ids=assigned, roles=roles)
    if role is None:
        raise NotFound(AGENT_NOT_FOUND)
    if principal.is_api_key and agent.deploy_target == DeployTarget.REMOTE_DOCKER:
        raise SessionRequired("Remote Docker agents can only be operated from a signed-in session.")
    if role < min_role:
        raise Forbidden(f"This needs the role '{min_role.label}' on the agent.")
    return AgentAccess(agent=agent, role=role, is_direct_owner=agent.owner_id == principal.user.pk)


def agent_for(principal: Principal, agent_id, *, min_role: Role = Role.VIEWER) -> Agent:
    """The agent for an /agents/:id route, or the API error the caller deserves."""
    return agent_access(principal, agent_id, min_role=min_role).agent


def agent_for_owner(principal: Principal, agent_id) -> Agent:
    """Deleting is limited to the direct owner (a key acts for its issuer, inside its workspace)."""
    access = agent_access(principal, agent_id, min_role=Role.EDITOR if principal.is_api_key else Role.VIEWER)
    if not access.is_direct_owner:
        raise Forbidden("Only the agent's direct owner may delete it.")
    return access.agent


def agent_workspace_ids(agent: Agent) -> list[UUID]:
    return list(WorkspaceAgent.objects.filter(agent_id=agent.pk).values_list("workspace_id", flat=True))


def workspace_agent_list(*, workspace: Workspace, user) -> list[dict]:
    """GET /workspaces/:id/agents: the agents assigned to a workspace, one query."""
    rows = (
        WorkspaceAgent.objects.filter(workspace=workspace)
        .order_by("-agent__created_at")
        .values_list("agent_id", "agent__name", "agent__status", "role", "agent__owner_id")
    )
    return [
        {"agentId": a, "agentName": n, "agentStatus": s, "role": r, "isDirectOwner": o == user.pk}
        for a, n, s, r, o in rows
    ]


def workspace_agent_candidates(*, workspace: Workspace, user) -> list[dict]:
    """GET /workspaces/:id/agent-candidates: the caller's own agents, flagged when assigned here."""
    assigned = WorkspaceAgent.objects.filter(workspace=workspace, agent_id=OuterRef("pk"))
    rows = (
        Agent.objects.filter(owner_id=user.pk)
        .annotate(assigned=Exists(assigned))
        .order_by("-created_at")
        .values_list("id", "name", "status", "assigned")
    )
    return [{"agentId": i, "name": n, "status": s, "assigned": a} for i, n, s, a in rows]
