"""The revisions of an agent's row of GET /agents, moved by database triggers whenever that row
may read differently, so a web process may keep the row's JSON under them (agents.list_rows) and
serialize again only the rows whose revisions moved.

A row of the list shows the agent's listed columns (agents.selectors.LIST_COLUMNS, owner
included), its assignments (workspace, label) and those workspaces' names; what the caller is
(user, platform role, memberships and their roles, key, scopes) is not the agent's business:
agents.list_rows keys the kept rows by it. Two revisions, each moved in the transaction of the
write (so visible atomically with it):

- `agents_agent.list_revision`, the agent's own: on its INSERT, or an UPDATE that changes a
  listed column, a BEFORE trigger sets NEW.list_revision, so the status updates of a busy fleet
  cost no extra write. A TRUNCATE of the assignments moves every agent's.
- `agents_assignmentsrevision.revision` (AssignmentsRevision), its assignments': on an
  assignment's INSERT or DELETE, or an UPDATE of its agent, workspace or label (the old and the
  new agent), and on a workspace's rename (every agent assigned to it), at COMMIT (deferred
  constraint triggers, like the list version's). A table of its own rather than the agent's
  row: a lifecycle action holds the agent's row lock across its engine calls, and assigning,
  relabelling or renaming must not wait for it. Its rows are upserted in agent id order (two
  renames never lock them in opposite orders), only for agents that exist, and deleted with
  their agent.

An agent's deletion needs nothing more: a row not listed is not shown.

Never reused, so a row kept under its revisions is never taken for other data: each is
GREATEST(the current one + 1, the clock in microseconds * 1000 + the last three digits of a
sequence): strictly rising per agent, past every value handed out before even on a database
restored from an older backup (as the list version, agents.list_triggers), and an agent created
again with the id of a deleted one starts past it. The BEFORE trigger also keeps an UPDATE from
writing back an older list_revision (a model instance saved with the value it was read with).

When install() has to (re)create any of this (a first install, a dropped trigger, a change of
the listed columns) it also moves every agent's list_revision: a write made while a trigger was
missing may have left a revision behind its data.

PostgreSQL only: on SQLite (the default database of `make run`) nothing moves the revisions and
agents.list_rows builds every list whole.
"""

from __future__ import annotations

from django.db import connections, transaction
from django.db.migrations.recorder import MigrationRecorder

from .list_triggers import Trigger, install_functions, install_triggers, watched_columns
from .models import Agent, AssignmentsRevision, WorkspaceAgent

INSTALLED_BY = ("agents", "0019_agent_list_revision")
TRIGGER_PREFIX = "fleet_list_revision"  # not fleet_list_version: list_triggers drops its own strays
SEQUENCE = "fleet_list_revision_seq"
NEXT_FUNCTION = "fleet_list_revision_next"  # (the current revision) -> the next one
AGENT_FUNCTION = "fleet_list_revision_agent"
ASSIGNMENT_FUNCTION = "fleet_list_revision_assignment"
WORKSPACE_FUNCTION = "fleet_list_revision_workspace"
EVERY_AGENT_FUNCTION = "fleet_list_revision_every_agent"
FORGET_FUNCTION = "fleet_list_revision_forget"

AGENTS = Agent._meta.db_table
ASSIGNMENTS = WorkspaceAgent._meta.db_table
_WORKSPACE = WorkspaceAgent._meta.get_field("workspace").related_model
WORKSPACES = _WORKSPACE._meta.db_table
WORKSPACE_NAME = _WORKSPACE._meta.get_field("name").column
REVISION = Agent._meta.get_field("list_revision").column
ASSIGNED = AssignmentsRevision._meta.db_table
ASSIGNED_AGENT = AssignmentsRevision._meta.get_field("agent").column
ASSIGNED_REVISION = AssignmentsRevision._meta.get_field("revision").column

_CLOCK_US = "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint"
NEXT_BODY = f"""
BEGIN
    RETURN GREATEST(current + 1, {_CLOCK_US} * 1000 + nextval('{SEQUENCE}') % 1000);
END
"""
EVERY_AGENT_BODY = f"""
BEGIN
    UPDATE {AGENTS} SET {REVISION} = {NEXT_FUNCTION}({REVISION});
    RETURN NULL;
END
"""


def _agent_body(columns: tuple[str, ...]) -> str:
    old = ", ".join(f"OLD.{column}" for column in columns)
    new = ", ".join(f"NEW.{column}" for column in columns)
    return f"""
BEGIN
    IF TG_OP = 'INSERT' THEN
        NEW.{REVISION} := {NEXT_FUNCTION}(0);
    ELSIF ROW({old}) IS DISTINCT FROM ROW({new}) THEN
        NEW.{REVISION} := {NEXT_FUNCTION}(GREATEST(OLD.{REVISION}, NEW.{REVISION}));
    ELSE
        NEW.{REVISION} := GREATEST(OLD.{REVISION}, NEW.{REVISION});
    END IF;
    RETURN NEW;
END
"""


def _assigned_upsert(agent_ids_sql: str) -> str:
    """Move the assignments' revision of the agents `agent_ids_sql` selects (existing ones only,
    in id order)."""
    return f"""INSERT INTO {ASSIGNED} ({ASSIGNED_AGENT}, {ASSIGNED_REVISION})
        SELECT a.id, {NEXT_FUNCTION}(0) FROM {AGENTS} a WHERE a.id IN ({agent_ids_sql}) ORDER BY a.id
        ON CONFLICT ({ASSIGNED_AGENT})
        DO UPDATE SET {ASSIGNED_REVISION} = {NEXT_FUNCTION}({ASSIGNED}.{ASSIGNED_REVISION});"""


def _assignment_body(agent_column: str) -> str:
    return f"""
BEGIN
    IF TG_OP = 'INSERT' THEN
        {_assigned_upsert(f"NEW.{agent_column}")}
    ELSIF TG_OP = 'DELETE' THEN
        {_assigned_upsert(f"OLD.{agent_column}")}
    ELSE
        {_assigned_upsert(f"OLD.{agent_column}, NEW.{agent_column}")}
    END IF;
    RETURN NULL;
END
"""


def _workspace_body(agent_column: str, workspace_column: str) -> str:
    return f"""
BEGIN
    {_assigned_upsert(f"SELECT {agent_column} FROM {ASSIGNMENTS} WHERE {workspace_column} = NEW.id")}
    RETURN NULL;
END
"""


FORGET_BODY = f"""
BEGIN
    DELETE FROM {ASSIGNED} WHERE {ASSIGNED_AGENT} = OLD.id;
    RETURN NULL;
END
"""


def _columns() -> tuple[tuple[str, ...], str, str, tuple[str, ...]]:
    """The agents' listed columns, the assignments' agent and workspace columns, and the
    assignment columns a row shows."""
    watched = watched_columns()
    agent_column = WorkspaceAgent._meta.get_field("agent").column
    workspace_column = WorkspaceAgent._meta.get_field("workspace").column
    return watched[AGENTS], agent_column, workspace_column, watched[ASSIGNMENTS]


def wanted_functions() -> dict[str, tuple[str, str]]:
    """The trigger functions: name -> (what it returns, its plpgsql body). The next-revision
    function, which takes an argument, is NEXT_BODY."""
    agent_columns, agent_column, workspace_column, _ = _columns()
    return {
        AGENT_FUNCTION: ("trigger", _agent_body(agent_columns)),
        ASSIGNMENT_FUNCTION: ("trigger", _assignment_body(agent_column)),
        WORKSPACE_FUNCTION: ("trigger", _workspace_body(agent_column, workspace_column)),
        EVERY_AGENT_FUNCTION: ("trigger", EVERY_AGENT_BODY),
        FORGET_FUNCTION: ("trigger", FORGET_BODY),
    }


def wanted_triggers(quote) -> list[Trigger]:
    _, _, _, assignment_columns = _columns()
    changed = " OR ".join(f"OLD.{quote(c)} IS DISTINCT FROM NEW.{quote(c)}" for c in assignment_columns)
    deferred = "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW"

    def run(function):
        return f"EXECUTE FUNCTION {function}()"

    name = (f"{TRIGGER_PREFIX}_set", f"{TRIGGER_PREFIX}_write", f"{TRIGGER_PREFIX}_change", f"{TRIGGER_PREFIX}_all",
            f"{TRIGGER_PREFIX}_forget")
    agents, assignments, workspaces = quote(AGENTS), quote(ASSIGNMENTS), quote(WORKSPACES)
    return [
        Trigger(AGENTS, name[0], f"CREATE TRIGGER {name[0]} BEFORE INSERT OR UPDATE ON {agents} FOR EACH ROW "
                                 f"{run(AGENT_FUNCTION)}"),
        Trigger(AGENTS, name[4], f"CREATE TRIGGER {name[4]} AFTER DELETE ON {agents} FOR EACH ROW "
                                 f"{run(FORGET_FUNCTION)}"),
        Trigger(ASSIGNMENTS, name[1], f"CREATE CONSTRAINT TRIGGER {name[1]} AFTER INSERT OR DELETE ON {assignments} "
                                      f"{deferred} {run(ASSIGNMENT_FUNCTION)}"),
        Trigger(ASSIGNMENTS, name[2], f"CREATE CONSTRAINT TRIGGER {name[2]} AFTER UPDATE ON {assignments} "
                                      f"{deferred} WHEN ({changed}) {run(ASSIGNMENT_FUNCTION)}"),
        Trigger(ASSIGNMENTS, name[3], f"CREATE TRIGGER {name[3]} AFTER TRUNCATE ON {assignments} FOR EACH STATEMENT "
                                      f"{run(EVERY_AGENT_FUNCTION)}"),
        Trigger(WORKSPACES, name[2], f"CREATE CONSTRAINT TRIGGER {name[2]} AFTER UPDATE ON {workspaces} {deferred} "
                                     f"WHEN (OLD.{WORKSPACE_NAME} IS DISTINCT FROM NEW.{WORKSPACE_NAME}) "
                                     f"{run(WORKSPACE_FUNCTION)}"),
    ]


def install(connection) -> list[str]:
    """Make the sequence, the functions and the triggers exist as defined here (PostgreSQL),
    dropping any other fleet_list_revision trigger; when anything had to be (re)made, move every
    agent's revision. Idempotent; answers what it (re)created, empty when all was in place."""
    if connection.vendor != "postgresql":
        return []
    quote = connection.ops.quote_name
    done = []
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        cursor.execute(f"CREATE SEQUENCE IF NOT EXISTS {SEQUENCE}")
        done += _install_next(cursor)
        done += install_functions(cursor, wanted_functions())
        done += install_triggers(cursor, "postgresql", quote, wanted_triggers(quote), TRIGGER_PREFIX)
        if done:
            cursor.execute(f"UPDATE {quote(AGENTS)} SET {REVISION} = {NEXT_FUNCTION}({REVISION})")
    return done


def _install_next(cursor) -> list[str]:
    """The next-revision function, which takes the current revision (install_functions makes
    functions without arguments)."""
    signature = f"{NEXT_FUNCTION}(bigint)"
    cursor.execute("SELECT prosrc FROM pg_proc WHERE oid = to_regprocedure(%s)", [signature])
    row = cursor.fetchone()
    if row is not None and row[0] == NEXT_BODY:
        return []
    cursor.execute(f"CREATE OR REPLACE FUNCTION {NEXT_FUNCTION}(current bigint) RETURNS bigint LANGUAGE plpgsql "
                   "AS $$" + NEXT_BODY + "$$")
    return [signature]


def install_after_migrate(sender, *, using: str, **kwargs) -> None:
    """post_migrate (agents.apps): once the column exists, keep all of it in place."""
    connection = connections[using]
    if connection.vendor != "postgresql":
        return
    if INSTALLED_BY not in MigrationRecorder(connection).applied_migrations():
        return
    install(connection)
