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
from functools import cache
from uuid import UUID

from django.db import connection, connections
from django.db.models import BooleanField, CharField, Exists, ExpressionWrapper, F, Func, OuterRef, Q, QuerySet
from django.db.models.expressions import RawSQL

from fleet.api.fields import uuid_or_none
from fleet.api.principal import Principal
from fleet.compiled_query import CompiledRows
from fleet.errors import Forbidden, MissingScope, NotFound
from fleet.postgresql.prepared import prepared_statements
from workspaces.access import workspace_roles
from workspaces.models import Membership, Workspace
from workspaces.roles import Role, Scope, session_role

from .models import Agent, WorkspaceAgent
from .targets.access import hidden_deploy_targets, require_session_for_target

AGENT_NOT_FOUND = "Agent not found."

# GET /agents, one row per agent: (JSON name, the column it is read from, or None when it is
# computed per row). The one table of the builder (_rendered) and of the documentation
# (agents.api.serializers.AgentListItemOut). Rows are read as tuples of these columns (no model
# instances, no dict per row from the ORM); the *_text columns are id, owner_id and created_at
# as the text the JSON body shows (see _UuidText and _IsoTimestampUTC).
LIST_FIELDS = (
    ("id", "id_text"),
    ("name", "name"),
    ("status", "status"),
    ("runtime_family", "runtime_family"),
    ("deploy_target", "deploy_target"),
    ("execution_target_id", "execution_target_id"),
    ("sandbox_profile", "sandbox_profile"),
    ("vcpu", "vcpu"),
    ("ram_mb", "ram_mb"),
    ("disk_gb", "disk_gb"),
    ("node", "node"),
    ("container_id", "container_id"),
    ("paused_reason", "paused_reason"),
    ("last_error", "last_error"),  # the current reason of a warning/error/stopped, or ""
    ("created_at", "created_text"),
    ("sandbox_type", None),
    ("isDirectOwner", None),
    ("effectiveRole", None),
    ("workspaces", None),
)
LIST_KEYS = tuple(name for name, _ in LIST_FIELDS)
# The read columns come first in LIST_FIELDS; owner_text (not shown) closes each row.
LIST_COLUMNS = tuple(column for _, column in LIST_FIELDS if column) + ("owner_text",)
OWNER_AT = len(LIST_COLUMNS) - 1
# Rows read with their revisions (agent_list_rows) carry them last: the agent's, its assignments'.
REVISION_COLUMNS = ("list_revision", "assignments_revision__revision")
REVISION_AT = len(LIST_COLUMNS)


def _iso_utc(column: str) -> str:
    """SQL for a timestamptz as orjson writes the aware datetime in UTC:
    `YYYY-MM-DDTHH:MM:SS[.ffffff]+00:00`, microseconds left out when zero."""
    return (
        f"to_char({column} AT TIME ZONE 'UTC', CASE WHEN date_trunc('second', {column}) = {column}"
        " THEN 'YYYY-MM-DD\"T\"HH24:MI:SS\"+00:00\"' ELSE 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"+00:00\"' END)"
    )


class _IsoTimestampUTC(Func):
    """A timestamptz as Python's isoformat() writes it in UTC (what orjson writes for the
    aware datetime): `YYYY-MM-DDTHH:MM:SS[.ffffff]+00:00`, microseconds left out when zero.
    Formatting in PostgreSQL spares the Python-level timestamptz loader, which costs more than
    everything else in GET /agents put together (about 15 ms for 1,000 rows)."""

    output_field = CharField()
    template = _iso_utc("%(expressions)s")


class _UuidText(Func):
    """A uuid as its canonical text (what str(UUID) and orjson write). Python's UUID hashes and
    compares in Python code, and GET /agents does thousands of look-ups by agent and workspace
    id; str keys hash in C and cache their hash."""

    output_field = CharField()
    template = "(%(expressions)s)::text"


def _on_postgresql() -> bool:
    return connection.vendor == "postgresql"


# Other databases (SQLite) keep the Python values; orjson writes them the same way.
def _created_at_text():
    return _IsoTimestampUTC("created_at") if _on_postgresql() else F("created_at")


def _uuid_text(column: str):
    return _UuidText(column) if _on_postgresql() else F(column)


def _uuid_key(value):
    """A UUID in the form _uuid_text() reads it, for look-ups against those columns."""
    return str(value) if _on_postgresql() else value


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


def _visible_agents(principal: Principal, *, owned_only: bool = False) -> QuerySet[Agent]:
    """The agents a principal may see (before any role check), as a queryset."""
    user_id = principal.user.pk
    if principal.is_api_key:
        in_key_workspace = WorkspaceAgent.objects.filter(agent_id=OuterRef("pk"), workspace_id=principal.workspace_id)
        agents = Agent.objects.filter(Exists(in_key_workspace))
        agents = agents.exclude(deploy_target__in=hidden_deploy_targets(principal))
        return agents.filter(owner_id=user_id) if owned_only else agents
    if owned_only:
        return Agent.objects.filter(owner_id=user_id)
    if principal.is_platform_admin:
        return Agent.objects.all()
    shared = WorkspaceAgent.objects.filter(agent_id=OuterRef("pk"), workspace__memberships__user_id=user_id)
    return Agent.objects.filter(Q(owner_id=user_id) | Q(Exists(shared)))


def _among(model, field: str, values) -> Q:
    """`field IN values`; on PostgreSQL `= ANY(array)`, one parameter whatever the number of
    values, so the statement's text (and its prepared plan) is the same for every caller."""
    if not _on_postgresql():
        return Q(**{f"{field}__in": list(values)})
    quote = connection.ops.quote_name
    column = f"{quote(model._meta.db_table)}.{quote(model._meta.get_field(field).column)}"
    return Q(RawSQL(f"{column} = ANY(%s::uuid[])", (list(values),), output_field=BooleanField()))


def _listed_assignments(principal: Principal, *, roles: dict[UUID, Role], owned_only: bool) -> QuerySet:
    """The assignments GET /agents shows: those in the workspaces of `roles` (the caller's
    memberships as read once for the whole list; all of them for a platform admin). Every agent
    assigned to such a workspace is visible to the caller, so no join on agents is needed."""
    assignments = WorkspaceAgent.objects.all()
    if principal.is_api_key:
        assignments = assignments.filter(workspace_id=principal.workspace_id)
    elif not principal.is_platform_admin:
        # From `roles`, not a fresh join on memberships: a row then depends on nothing the
        # caller's key in agents.list_rows leaves out, even if a membership changes meanwhile.
        assignments = assignments.filter(_among(WorkspaceAgent, "workspace", roles))
    if owned_only:
        assignments = assignments.filter(agent__owner_id=principal.user.pk)
    return assignments


def _listed_agents(principal: Principal, *, owned_only: bool) -> QuerySet[Agent]:
    """The agents GET /agents shows, newest first, with the text columns of LIST_COLUMNS."""
    return (
        _visible_agents(principal, owned_only=owned_only)
        .annotate(id_text=_uuid_text("id"), owner_text=_uuid_text("owner_id"), created_text=_created_at_text())
        .order_by("-created_at", "-id")
    )


def agent_list(principal: Principal, *, scope: str = "accessible") -> list[dict]:
    """GET /agents built in Python: newest first, each row with isDirectOwner, effectiveRole and
    workspaces[]. Three queries whatever the number of agents or workspaces: the caller's roles,
    the agent rows, and the assignments of those agents to workspaces the caller may see. Each
    is a prepared statement whose text is the same for every caller (the caller's id and its
    workspaces' are parameters), planned once per connection. After a write agents.list_rows
    reads only what changed (agent_list_revisions, agent_list_rows).
    """
    owned_only = scope == "owned"
    with prepared_statements():
        roles = workspace_roles(principal)
        rows = list(_listed_agents(principal, owned_only=owned_only).values_list(*LIST_COLUMNS))
        if not rows:
            return []
        by_agent, best_role = _links(_assignment_queryset(_listed_assignments(principal, roles=roles,
                                                                             owned_only=owned_only)), roles)
        return _rendered(principal, rows, by_agent, best_role)


def agent_list_revisions(principal: Principal, *, scope: str = "accessible") -> list[tuple[str, int, int | None]]:
    """(id, list revision, assignments' revision or None) of each agent GET /agents shows the
    caller, in the list's order: one query (agents.list_rows, agents.list_revisions; PostgreSQL)."""
    owned_only = scope == "owned"
    return _list_read("revisions", principal, owned_only, _visibility_arguments(principal, owned_only))


def agent_list_rows(principal: Principal, roles: dict[UUID, Role], *, scope: str = "accessible",
                    agent_ids: list[str] | None = None, known: dict[str, tuple[int | None, Links]] | None = None,
                    ) -> list[tuple[str, int, int | None, dict, Links]]:
    """(id, its two revisions, row, links) for the rows of GET /agents: every one, in the list's
    order, or those of `agent_ids` (ids agent_list_revisions listed; in no order), those deleted
    meanwhile left out (PostgreSQL). `known`: per agent id, its assignments' revision and the
    links (_links) kept with it; an agent whose assignments' revision is still that one takes
    them as they are, so its assignments are not read. Two queries, one when no assignments are
    read (agents.list_rows).

    A row is a function of its agent's data at those revisions (agents.list_revisions) and of
    the caller as given: the principal and `roles`, its memberships as read once for the whole
    list (workspace_roles), nothing read besides. The revisions are read with the agent's
    columns; the assignments are read after them, so they are at least as new: a row rendered
    with newer ones is kept under older revisions, which the next read of them then no longer
    matches.
    """
    owned_only = scope == "owned"
    kept: dict[str, Links] = {}
    if agent_ids is None:
        with prepared_statements():
            rows = list(_listed_agents(principal, owned_only=owned_only).values_list(*LIST_COLUMNS, *REVISION_COLUMNS))
            assignments = _assignment_rows(_listed_assignments(principal, roles=roles, owned_only=owned_only)) \
                if rows else []
    else:
        rows = _list_read("rows", principal, owned_only, {"agents": agent_ids})
        unread = []
        for row in rows:
            found = known.get(row[0]) if known else None
            if found is not None and found[0] == row[REVISION_AT + 1]:
                kept[row[0]] = found[1]
            else:
                unread.append(row[0])
        assignments = _list_read("assignments", principal, owned_only,
                                 _assignment_arguments(principal, roles, owned_only) | {"agents": unread}) \
            if unread else []
    by_agent, best_role = _links(assignments, roles)
    for agent_id, (workspaces, role) in kept.items():
        by_agent[agent_id] = workspaces
        if role:
            best_role[agent_id] = role
    rendered = _rendered(principal, rows, by_agent, best_role)
    return [(row[0], row[REVISION_AT], row[REVISION_AT + 1], item,
             (by_agent.get(row[0], NO_LINKS[0]), best_role.get(row[0], 0)))
            for row, item in zip(rows, rendered, strict=True)]


# The reads of agents.list_rows, compiled once per caller shape (fleet.compiled_query): building
# and compiling these querysets cost more than running them for a list where one row changed.
_LIST_READS = {
    "revisions": lambda caller, owned_only, given: _visible_agents(caller, owned_only=owned_only)
    .annotate(id_text=_uuid_text("id")).order_by("-created_at", "-id").values_list("id_text", *REVISION_COLUMNS),
    # By id alone: the ids are those agent_list_revisions listed. A visibility filter here made
    # PostgreSQL's generic plan hash every assignment of the fleet for a handful of rows.
    "rows": lambda caller, owned_only, given: Agent.objects.filter(_among(Agent, "id", given["agents"]))
    .annotate(id_text=_uuid_text("id"), owner_text=_uuid_text("owner_id"), created_text=_created_at_text())
    .values_list(*LIST_COLUMNS, *REVISION_COLUMNS),
    "assignments": lambda caller, owned_only, given: _assignment_queryset(
        _listed_assignments(caller, roles=given.get("memberships", {}), owned_only=owned_only)
        .filter(_among(WorkspaceAgent, "agent", given["agents"]))),
}
_ARGUMENT_KINDS = {"user": UUID, "workspace": UUID, "memberships": list, "agents": list}
_compiled_list_reads: dict[tuple, CompiledRows] = {}


@dataclass(frozen=True)
class _CallerStandIn:
    """The user of the principal a list read is compiled for: its id is the query's marker."""

    pk: object
    is_platform_admin: bool


def _visibility_arguments(principal: Principal, owned_only: bool) -> dict[str, object]:
    """What _visible_agents writes into its SQL for this caller, by name."""
    found: dict[str, object] = {}
    if principal.is_api_key:
        found["workspace"] = principal.workspace_id
    if owned_only or not (principal.is_api_key or principal.is_platform_admin):
        found["user"] = principal.user.pk
    return found


def _assignment_arguments(principal: Principal, roles: dict[UUID, Role], owned_only: bool) -> dict[str, object]:
    """What _listed_assignments writes into its SQL for this caller, by name."""
    found: dict[str, object] = {}
    if principal.is_api_key:
        found["workspace"] = principal.workspace_id
    elif not principal.is_platform_admin:
        found["memberships"] = list(roles)
    if owned_only:
        found["user"] = principal.user.pk
    return found


def _list_read(read: str, principal: Principal, owned_only: bool, values: dict[str, object]) -> list[tuple]:
    """Run one of _LIST_READS with `values`, compiled at its first run for this caller's shape
    (credential kind, platform admin, scope): the same SQL text for every caller of the shape."""
    names = tuple(values)
    shape = (read, principal.kind, principal.is_platform_admin, owned_only, names)
    compiled = _compiled_list_reads.get(shape)
    if compiled is None:
        def build(*markers):
            given = dict(zip(names, markers, strict=True))
            caller = Principal(user=_CallerStandIn(given.get("user"), principal.is_platform_admin),
                               kind=principal.kind, workspace_id=given.get("workspace"))
            return _LIST_READS[read](caller, owned_only, given)

        compiled = _compiled_list_reads.setdefault(shape, CompiledRows(build, *(_ARGUMENT_KINDS[n] for n in names)))
    return compiled.rows(*values.values())


def _assignment_queryset(assignments: QuerySet) -> QuerySet:
    """(agent id, workspace id, workspace name, label) of assignments, as a row's workspaces[]
    lists them."""
    return (
        assignments.annotate(agent_text=_uuid_text("agent_id"), workspace_text=_uuid_text("workspace_id"))
        # By id among equal names: a stable order, the one the SQL builder uses too.
        .order_by("workspace__name", "workspace_id")
        .values_list("agent_text", "workspace_text", "workspace__name", "role")
    )


def _assignment_rows(assignments: QuerySet) -> list[tuple]:
    return list(_assignment_queryset(assignments))


# What a row takes from its assignments for one caller: its workspaces[] and the caller's highest
# role among them (0: none). agents.list_rows keeps it beside the row's JSON.
Links = tuple[list, int]
NO_LINKS: Links = ([], 0)


def _links(assignment_rows, roles: dict[UUID, Role]) -> tuple[dict[str, list[dict]], dict[str, int]]:
    """Per agent id, from the rows of _assignment_queryset: its workspaces[] and the caller's
    highest role among them."""
    by_agent: dict[str, list[dict]] = defaultdict(list)
    best_role: dict[str, int] = {}  # the caller's highest workspace role per agent
    # Plain ints: comparing them is cheaper than comparing IntEnum members.
    int_roles = {_uuid_key(workspace_id): int(role) for workspace_id, role in roles.items()}
    # One item per (workspace, label), shared by the agents it appears on: about 50 dicts, not 1,400.
    items: dict[tuple[str, str | None], dict] = {}
    for agent_id, workspace_id, workspace_name, label in assignment_rows:
        item = items.get((workspace_id, label))
        if item is None:
            item = items[workspace_id, label] = {"id": workspace_id, "name": workspace_name, "role": label}
        by_agent[agent_id].append(item)
        role = int_roles.get(workspace_id)
        if role is not None and role > best_role.get(agent_id, 0):
            best_role[agent_id] = role
    return by_agent, best_role


def _rendered(principal: Principal, rows: list[tuple], by_agent: dict[str, list[dict]],
              best_role: dict[str, int]) -> list[dict]:
    """The rows of LIST_COLUMNS (any columns after them ignored) as the list's dicts, with their
    links (_links)."""
    # Per row only dictionary look-ups and one dict: this runs once per agent (1,000 and more).
    user_id = _uuid_key(principal.user.pk)
    labels = {int(role): role.label for role in Role}
    is_key = principal.is_api_key
    key_role = key_agent_role(principal) if is_key else None
    key_label = key_role.label if key_role is not None else None
    admin_floor = int(session_role(principal, None) or 0)  # a platform admin's role without membership
    owner_label = Role.OWNER.label
    empty: list = []
    body = []
    append = body.append
    keys, sandbox_at, owner_at = LIST_KEYS, LIST_COLUMNS.index("sandbox_profile"), OWNER_AT
    for row in rows:
        agent_id, owner_id = row[0], row[owner_at]
        is_owner = owner_id == user_id
        if is_key:
            label = key_label
        elif is_owner:
            label = owner_label
        else:
            role = best_role.get(agent_id, 0)
            if role < admin_floor:
                role = admin_floor
            label = labels.get(role)
        # The read columns, then the computed fields, in LIST_FIELDS order (strict: a row that
        # does not fit the table fails instead of dropping or shifting a field).
        values = (*row[:owner_at], row[sandbox_at], is_owner, label, by_agent.get(agent_id, empty))
        append(dict(zip(keys, values, strict=True)))
    return body


def _role_on_agent(principal: Principal, agent: Agent) -> Role | None:
    """The caller's role on a visible agent, or None when it may not see it. At most one query
    (none for the direct owner): simple reads compile faster than one query with subqueries."""
    if principal.is_api_key:
        in_workspace = WorkspaceAgent.objects.filter(agent_id=agent.pk, workspace_id=principal.workspace_id)
        return key_agent_role(principal) if in_workspace.exists() else None
    if agent.owner_id == principal.user.pk:
        return Role.OWNER
    # The caller's memberships in the agent's workspaces: workspace_roles() limited to those.
    labels = Membership.objects.filter(
        user_id=principal.user.pk, workspace__agent_assignments__agent_id=agent.pk
    ).values_list("role", flat=True)
    return session_role(principal, max((Role.parse(label) for label in labels), default=None))


@cache
def _agent_row(alias: str) -> tuple[str, list[str], list[tuple[int, list, object]]]:
    """How to read one agent by primary key with SQL of fixed text (prepared once per connection
    on PostgreSQL), computed once per process: the SQL, the attribute names in column order, and
    each column's converters as the ORM applies them (decrypting, JSON, the backend's own)."""
    db, meta = connections[alias], Agent._meta
    quote = db.ops.quote_name
    fields = meta.concrete_fields
    columns = ", ".join(quote(field.column) for field in fields)
    sql = f"SELECT {columns} FROM {quote(meta.db_table)} WHERE {quote(meta.pk.column)} = %s LIMIT 1"
    converters = []
    for index, field in enumerate(fields):
        column = field.get_col(meta.db_table)
        found = db.ops.get_db_converters(column) + column.get_db_converters(db)
        if found:
            converters.append((index, found, column))
    return sql, [field.attname for field in fields], converters


def _agent_by_id(agent_uuid) -> Agent | None:
    """One agent by primary key. Neither the ORM's query compiler nor a raw queryset: compiling
    was a sixth of the CPU of GET /agents/:id, and a raw queryset maps its columns from the
    cursor's description on every call; the row is converted as the ORM converts it."""
    sql, attnames, converters = _agent_row(connection.alias)
    key = Agent._meta.pk.get_db_prep_value(agent_uuid, connection)
    with prepared_statements(), connection.cursor() as cursor:
        cursor.execute(sql, [key])
        row = cursor.fetchone()
    if row is None:
        return None
    values = list(row)
    for index, found, column in converters:
        value = values[index]
        for convert in found:
            value = convert(value, column, connection)
        values[index] = value
    return Agent.from_db(connection.alias, attnames, values)


def agent_access(principal: Principal, agent_id, *, min_role: Role = Role.VIEWER) -> AgentAccess:
    """The agent and the caller's role on it, or 404 (not visible) / 403 (role too low).

    Keys: 403 missing_scope when their scopes cannot reach `min_role`; 404 for agents outside
    their workspace; 403 session_required on Remote Docker agents (session-only).
    One query for the direct owner, two for anyone else (GET /agents/:id is a hot path).
    """
    require_agent_scope(principal, min_role)
    agent_uuid = uuid_or_none(agent_id)
    agent = _agent_by_id(agent_uuid) if agent_uuid else None
    if agent is None:
        raise NotFound(AGENT_NOT_FOUND)
    role = _role_on_agent(principal, agent)
    if role is None:
        raise NotFound(AGENT_NOT_FOUND)
    require_session_for_target(principal, deploy_target=agent.deploy_target)
    if role < min_role:
        raise Forbidden(f"This needs the role '{min_role.label}' on the agent.")
    return AgentAccess(agent=agent, role=role, is_direct_owner=agent.owner_id == principal.user.pk)


def agent_access_for_owner(principal: Principal, agent_id) -> AgentAccess:
    """Deleting is limited to the direct owner (a key acts for its issuer, inside its workspace)."""
    access = agent_access(principal, agent_id, min_role=Role.EDITOR if principal.is_api_key else Role.VIEWER)
    if not access.is_direct_owner:
        raise Forbidden("Only the agent's direct owner may delete it.")
    return access


def agent_workspace_ids(agent_id) -> list[UUID]:
    """The workspaces an agent is assigned to, by its id (as a route or an audit row names it:
    none for a value that is not one)."""
    agent_uuid = uuid_or_none(agent_id)
    if agent_uuid is None:
        return []
    return list(WorkspaceAgent.objects.filter(agent_id=agent_uuid).values_list("workspace_id", flat=True))


def workspace_agent_list(*, workspace: Workspace, user) -> QuerySet[WorkspaceAgent]:
    """GET /workspaces/:id/agents: the workspace's assignments, newest agent first, one query,
    each with agent_name, agent_status and is_direct_owner (whether `user` owns the agent)."""
    return (
        WorkspaceAgent.objects.filter(workspace=workspace)
        .order_by("-agent__created_at")
        .only("agent_id", "role")
        .annotate(
            agent_name=F("agent__name"),
            agent_status=F("agent__status"),
            is_direct_owner=ExpressionWrapper(Q(agent__owner_id=user.pk), output_field=BooleanField()),
        )
    )


def workspace_agent_candidates(*, workspace: Workspace, principal: Principal) -> QuerySet[Agent]:
    """GET /workspaces/:id/agent-candidates: the caller's own agents, newest first, each with
    `assigned` (to this workspace). A workspace API key never sees past its workspace: its
    candidates are its issuer's agents already assigned there (security review, defect 1)."""
    assigned = WorkspaceAgent.objects.filter(workspace=workspace, agent_id=OuterRef("pk"))
    agents = Agent.objects.filter(owner_id=principal.user.pk)
    if principal.is_api_key:
        agents = agents.filter(Exists(assigned)).exclude(deploy_target__in=hidden_deploy_targets(principal))
    return agents.only("id", "name", "status").annotate(assigned=Exists(assigned)).order_by("-created_at")
