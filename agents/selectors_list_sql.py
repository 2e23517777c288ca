"""GET /agents on PostgreSQL: the database writes the whole JSON body in one query.

Building 1,000 rows in Python (reading tuples, a dict per row, orjson) is most of the web
process's CPU per request (about 20 of 30 ms), so PostgreSQL concatenates the body and Django
sends its bytes as they are. The output is byte for byte what `agents.selectors.agent_list()` gives
through orjson (tests/agents/test_list_sql.py compares the two on the same data):
- compact separators and orjson's key order, hence string concatenation rather than
  json_build_object (which writes `"key" : value`);
- strings through to_json(), whose escaping matches orjson's (`\\n`, `\\u001f`, raw UTF-8),
  or between quotes as they are in rows where no column holds a character to escape;
- floats as PostgreSQL writes them (the text psycopg reads for the Python builder too), plus
  the `.0` orjson gives integral values. Where the two could differ (NaN, infinities, exponent
  notation) the query says so and the caller builds the body in Python instead.

Which agents and assignments are listed is not decided here: the caller passes the same
querysets the Python builder reads (agents.selectors._visible_agents, _listed_assignments), so
the access rules live in one place.
"""

from __future__ import annotations

from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import QuerySet

from workspaces.roles import Role

from .models import Agent


def iso_utc(column: str) -> str:
    """SQL for a timestamptz as orjson writes the aware datetime in UTC:
    `YYYY-MM-DDTHH:MM:SS[.ffffff]+00:00`, microseconds left out when zero."""
    return (
        f"to_char({column} AT TIME ZONE 'UTC', CASE WHEN date_trunc('second', {column}) = {column}"
        " THEN 'YYYY-MM-DD\"T\"HH24:MI:SS\"+00:00\"' ELSE 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"+00:00\"' END)"
    )


# The row's keys in orjson's order (agent_list()'s dicts), each with how its value is written.
_STRING, _NULLABLE, _RAW = "string", "nullable", "raw"
_ROW = (
    ("id", _STRING, "a.id::text"),
    ("name", _STRING, "a.name"),
    ("status", _STRING, "a.status"),
    ("runtime_family", _STRING, "a.runtime_family"),
    ("deploy_target", _STRING, "a.deploy_target"),
    ("sandbox_profile", _STRING, "a.sandbox_profile"),
    # Integral floats get orjson's `.0`; _VCPU_SAFE says where the digits agree.
    ("vcpu", _RAW, "CASE WHEN a.vcpu = trunc(a.vcpu) THEN a.vcpu::text || '.0' ELSE a.vcpu::text END"),
    ("ram_mb", _RAW, "a.ram_mb::text"),
    ("disk_gb", _RAW, "a.disk_gb::text"),
    ("node", _STRING, "a.node"),
    ("container_id", _STRING, "a.container_id"),
    ("paused_reason", _NULLABLE, "a.paused_reason"),
    ("created_at", _STRING, iso_utc("a.created_at")),
    ("sandbox_type", _STRING, "a.sandbox_profile"),
)
# Columns whose text may need JSON escapes. Rows without any (nearly all) are written without
# to_json(), which costs more than the rest of the row.
_ESCAPABLE = ("name", "status", "runtime_family", "deploy_target", "sandbox_profile", "node", "container_id")
_NEEDS_ESCAPES = (
    "(" + " || ".join(f"a.{column}" for column in _ESCAPABLE) + " || coalesce(a.paused_reason, ''))"
    " ~ '[\\x01-\\x1f\"\\\\]'"
)


def _row_sql(*, escaped: bool) -> str:
    """SQL concatenating the row's fields from `"id"` to `"sandbox_type"`, adjacent literals merged."""
    pieces: list[tuple[bool, str]] = []  # (is_literal, text)

    def literal(text: str) -> None:
        if pieces and pieces[-1][0]:
            pieces[-1] = (True, pieces[-1][1] + text)
        else:
            pieces.append((True, text))

    for position, (key, kind, expression) in enumerate(_ROW):
        literal(("{" if position == 0 else ",") + f'"{key}":')
        if kind == _RAW or (escaped and kind == _STRING and key != "id" and key != "created_at"):
            pieces.append((False, expression if kind == _RAW else f"to_json({expression})::text"))
        elif kind == _NULLABLE:
            escape = f"to_json({expression})::text" if escaped else f"'\"' || {expression} || '\"'"
            pieces.append((False, f"coalesce({escape}, 'null')"))
        else:  # a string written between quotes as it is
            literal('"')
            pieces.append((False, expression))
            literal('"')
    return " || ".join(f"'{text}'" if is_literal else text for is_literal, text in pieces)


# Floats PostgreSQL and orjson both write as plain decimals: zero, or 1e-4 <= |x| < 1e15
# (PostgreSQL switches to exponents outside; NaN compares above every number).
_VCPU_SAFE = "(a.vcpu = 0 OR (abs(a.vcpu) >= 1e-4 AND abs(a.vcpu) < 1e15))"

# %s placeholders, in order: the listed assignments' params, the caller's workspace ids and
# roles, the caller's user id (isDirectOwner), the role labels, the effective role's params, the
# visible agents' params.
_BODY_SQL = """
WITH listed(agent_id, workspace_id, workspace_name, label) AS ({listed}),
shown AS (
    SELECT l.agent_id,
           string_agg('{{"id":"' || l.workspace_id::text || '","name":' || to_json(l.workspace_name)::text
                      || ',"role":' || coalesce(to_json(l.label)::text, 'null') || '}}',
                      ',' ORDER BY l.workspace_name, l.workspace_id) AS items,
           max(r.role) AS best_role
    FROM listed l
    LEFT JOIN unnest(%s::uuid[], %s::int[]) AS r(workspace_id, role) ON r.workspace_id = l.workspace_id
    GROUP BY l.agent_id
)
SELECT '[' || coalesce(string_agg(body, ',' ORDER BY created_at DESC, id DESC), '') || ']',
       coalesce(bool_and(vcpu_safe), true)
FROM (
    SELECT a.created_at, a.id, {vcpu_safe} AS vcpu_safe,
           CASE WHEN {needs_escapes} THEN {escaped_row} ELSE {plain_row} END
           || ',"isDirectOwner":' || CASE WHEN a.owner_id = %s THEN 'true' ELSE 'false' END
           || ',"effectiveRole":' || coalesce((%s::text[])[{role}], 'null')
           || ',"workspaces":[' || coalesce(s.items, '') || ']}}' AS body
    FROM {agents} a
    LEFT JOIN shown s ON s.agent_id = a.id
    WHERE a.id IN ({visible})
) AS listing
"""

_ESCAPED_ROW = _row_sql(escaped=True)
_PLAIN_ROW = _row_sql(escaped=False)
_NO_ASSIGNMENTS = "SELECT NULL::uuid, NULL::uuid, NULL::text, NULL::text WHERE false"

# The effective role as an int: a key's comes from its scopes (a parameter); a session's is
# owner for the direct owner, else its best workspace role among the listed assignments, at
# least the floor (admin for a platform admin, else 0, which has no label: null).
_KEY_ROLE = "%s::int"
_SESSION_ROLE = "CASE WHEN a.owner_id = %s THEN %s::int ELSE greatest(coalesce(s.best_role, 0), %s::int) END"


def _role_labels() -> list[str | None]:
    """Labels as JSON strings, indexed by role value (SQL arrays start at 1; Role values are 1..4)."""
    labels: list[str | None] = [None] * max(Role)
    for role in Role:
        labels[int(role) - 1] = f'"{role.label}"'
    return labels


_ROLE_LABELS = _role_labels()


def agent_list_body_sql(
    *,
    agents: QuerySet[Agent],
    assignments: QuerySet,
    roles: dict,
    user_id,
    key_role: Role | None,
    admin_floor: Role | None,
) -> bytes | None:
    """The body of GET /agents, or None when a value would not come out as orjson writes it.

    `agents` are the visible agents, `assignments` the WorkspaceAgent rows whose workspaces the
    caller may see, `roles` workspace id -> the caller's Role there. `key_role` is set for an
    API key (its role on every agent it sees); `admin_floor` for a platform admin.
    """
    try:
        visible_sql, visible_params = agents.order_by().values("id").query.sql_with_params()
    except EmptyResultSet:
        return b"[]"
    try:
        listed_sql, listed_params = (
            assignments.order_by().values("agent_id", "workspace_id", "workspace__name", "role").query.sql_with_params()
        )
    except EmptyResultSet:  # e.g. a caller in no workspace: `workspace_id IN ()` compiles to nothing
        listed_sql, listed_params = _NO_ASSIGNMENTS, ()
    if key_role is not None:
        role_sql, role_params = _KEY_ROLE, [int(key_role)]
    else:
        role_sql, role_params = _SESSION_ROLE, [user_id, int(Role.OWNER), int(admin_floor or 0)]
    sql = _BODY_SQL.format(
        listed=listed_sql,
        vcpu_safe=_VCPU_SAFE,
        needs_escapes=_NEEDS_ESCAPES,
        escaped_row=_ESCAPED_ROW,
        plain_row=_PLAIN_ROW,
        role=role_sql,
        agents=connection.ops.quote_name(Agent._meta.db_table),
        visible=visible_sql,
    )
    params = [
        *listed_params,
        list(roles),
        [int(role) for role in roles.values()],
        user_id,
        _ROLE_LABELS,
        *role_params,
        *visible_params,
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        body, exact = cursor.fetchone()
    return body.encode() if exact else None
