"""The triggers behind the list version: which writes change what GET /agents answers,
and the database triggers that bump `fleet_list_version` for them (read by agents.list_cache).

What a list answer is made of: agents, their assignments, workspaces (names), memberships
(visibility, roles), API keys (a key's workspace and scopes give its list and role) and users
(platform-admin role, deactivation, token revocation). INSERT, DELETE and TRUNCATE of any of
these always bump; an UPDATE bumps only when a column in `watched_columns()` changes (an API
key's last_used_at, an agent's readiness_failures, gateway port, handshake fields or a no-op
save never do). The agent columns are the ones the list's builder reads
(agents.selectors.LIST_COLUMNS), so a column added to the list is watched from then on.

PostgreSQL: row-level constraint triggers, DEFERRABLE INITIALLY DEFERRED. A writing transaction
takes no lock on the counter while it works (an agent updated before a call to a Docker engine,
an API key's last_used_at, two transactions writing listed tables in different orders): the
counter is updated at COMMIT, as the transaction's last statement, so its row lock is held only
for the commit itself, and the new version still becomes visible atomically with the data. A
transaction-local marker (`fleet.list_bumped`, set_config(..., true)) makes the first trigger
to fire bump and the others return, so a transaction bumps at most once whatever it wrote; a
rolled-back transaction or savepoint discards its pending triggers and bumps nothing. TRUNCATE
cannot be a constraint trigger: a statement trigger bumps at once (TRUNCATE locks its whole
table until commit anyway).

SQLite has no deferred triggers; it has one writer at a time, so there is nothing to contend
for: row triggers bump at once, with the same column conditions.

Every bump is GREATEST(version + 1, the clock in ms): a database restored from an older backup
never hands out again a version some process or client already holds for other data.

SQLite drops a table's triggers when a migration rebuilds the table (Django's way of altering
a column there), and a change of the list's columns must reach the triggers: `install()`
re-creates whatever is missing or differs, idempotently, after every `migrate` (post_migrate,
agents.apps). On PostgreSQL each trigger carries a COMMENT with a digest of its definition; on
SQLite the stored CREATE text is compared. Nothing is executed when all is in place.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.db import connections, transaction
from django.db.migrations.recorder import MigrationRecorder

from accounts.models import User
from workspaces.models import ApiKey, Membership, Workspace

from .models import Agent, WorkspaceAgent
from .selectors import LIST_COLUMNS

VERSION_TABLE = "fleet_list_version"
BUMP_FUNCTION = "fleet_list_version_bump"
READ_FUNCTION = "fleet_list_version_read"  # the version with this transaction's own bumps (list_cache)
MARKER = "fleet.list_bumped"  # transaction-local: this transaction has bumped already
WRITE_TRIGGER, CHANGE_TRIGGER, TRUNCATE_TRIGGER = (  # PostgreSQL
    "fleet_list_version_write", "fleet_list_version_change", "fleet_list_version_truncate")
TRIGGER_PREFIX = "fleet_list_version"
# The migration that installed these definitions: post_migrate leaves an older schema alone.
INSTALLED_BY = ("agents", "0009_list_version_deferred")

# The builder's computed columns (agents.selectors) and the model field each is read from.
_LIST_COLUMN_SOURCES = {"id_text": "id", "owner_text": "owner", "created_text": "created_at"}
_WATCHED_FIELDS = {
    Agent: tuple(dict.fromkeys(_LIST_COLUMN_SOURCES.get(column, column) for column in LIST_COLUMNS)),
    WorkspaceAgent: ("id", "agent", "workspace", "role"),
    Workspace: ("id", "name"),
    Membership: ("id", "workspace", "user", "role"),
    ApiKey: ("id", "workspace", "created_by", "digest", "scopes", "revoked_at"),
    User: ("id", "role", "is_active", "token_version"),
}

# Both rounded to the nearest ms: julianday is a float, and truncating it could land 1 ms early.
_CLOCK_MS = {
    "postgresql": "(extract(epoch FROM clock_timestamp()) * 1000)::bigint",
    "sqlite": "CAST(round((julianday('now') - 2440587.5) * 86400000) AS integer)",
}
_NEXT_VERSION = {
    "postgresql": f"GREATEST(version + 1, {_CLOCK_MS['postgresql']})",
    "sqlite": f"max(version + 1, {_CLOCK_MS['sqlite']})",
}
FUNCTION_BODY = f"""
BEGIN
    IF current_setting('{MARKER}', true) IS DISTINCT FROM 'on' THEN
        UPDATE {VERSION_TABLE} SET version = {_NEXT_VERSION['postgresql']} WHERE id = 1;
        PERFORM set_config('{MARKER}', 'on', true);
    END IF;
    RETURN NULL;
END
"""
# Inside a transaction that wrote, a read of the version must cover its writes, which would bump
# only at its commit: fire its pending bumps now (after clearing the mark of a bump it made
# before, so that its writes since then bump again), then read.
READ_FUNCTION_BODY = f"""
BEGIN
    PERFORM set_config('{MARKER}', '', true);
    SET CONSTRAINTS {WRITE_TRIGGER}, {CHANGE_TRIGGER} IMMEDIATE;
    SET CONSTRAINTS {WRITE_TRIGGER}, {CHANGE_TRIGGER} DEFERRED;
    RETURN (SELECT version FROM {VERSION_TABLE} WHERE id = 1);
END
"""
FUNCTIONS = {  # PostgreSQL: name -> (what it returns, its body)
    BUMP_FUNCTION: ("trigger", FUNCTION_BODY),
    READ_FUNCTION: ("bigint", READ_FUNCTION_BODY),
}


def watched_columns() -> dict[str, tuple[str, ...]]:
    """Table -> the columns whose change by an UPDATE bumps the list version."""
    return {
        model._meta.db_table: tuple(model._meta.get_field(name).column for name in names)
        for model, names in _WATCHED_FIELDS.items()
    }


@dataclass(frozen=True)
class Trigger:
    table: str
    name: str
    sql: str

    @property
    def digest(self) -> str:
        return "fleet list version " + hashlib.sha256(self.sql.encode()).hexdigest()[:16]


def _changed(columns, quote, distinct: str) -> str:
    return " OR ".join(f"OLD.{quote(c)} {distinct} NEW.{quote(c)}" for c in columns)


def postgresql_triggers(watched: dict[str, tuple[str, ...]], quote) -> list[Trigger]:
    triggers = []
    run = f"EXECUTE FUNCTION {BUMP_FUNCTION}()"
    deferred = "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW"
    for table, columns in watched.items():
        on = quote(table)
        triggers += [
            Trigger(table, WRITE_TRIGGER,
                    f"CREATE CONSTRAINT TRIGGER {WRITE_TRIGGER} AFTER INSERT OR DELETE ON {on} {deferred} {run}"),
            Trigger(table, CHANGE_TRIGGER,
                    f"CREATE CONSTRAINT TRIGGER {CHANGE_TRIGGER} AFTER UPDATE ON {on} {deferred} "
                    f"WHEN ({_changed(columns, quote, 'IS DISTINCT FROM')}) {run}"),
            Trigger(table, TRUNCATE_TRIGGER,
                    f"CREATE TRIGGER {TRUNCATE_TRIGGER} AFTER TRUNCATE ON {on} FOR EACH STATEMENT {run}"),
        ]
    return triggers


def sqlite_triggers(watched: dict[str, tuple[str, ...]], quote) -> list[Trigger]:
    bump = f"BEGIN UPDATE {VERSION_TABLE} SET version = {_NEXT_VERSION['sqlite']} WHERE id = 1; END"
    triggers = []
    for table, columns in watched.items():
        on = quote(table)
        for event in ("INSERT", "DELETE"):
            name = f"{TRIGGER_PREFIX}_{table}_{event.lower()}"
            triggers.append(Trigger(table, name, f"CREATE TRIGGER {name} AFTER {event} ON {on} {bump}"))
        name = f"{TRIGGER_PREFIX}_{table}_update"
        triggers.append(Trigger(table, name, f"CREATE TRIGGER {name} AFTER UPDATE ON {on} "
                                             f"WHEN {_changed(columns, quote, 'IS NOT')} {bump}"))
    return triggers


def wanted_triggers(connection) -> list[Trigger]:
    build = {"postgresql": postgresql_triggers, "sqlite": sqlite_triggers}.get(connection.vendor)
    if build is None:
        raise NotImplementedError(f"no list version triggers for {connection.vendor}")
    return build(watched_columns(), connection.ops.quote_name)


def _counter_statements(vendor: str) -> list[str]:
    kind = "bigint" if vendor == "postgresql" else "integer"
    insert = "INSERT INTO" if vendor == "postgresql" else "INSERT OR IGNORE INTO"
    conflict = " ON CONFLICT (id) DO NOTHING" if vendor == "postgresql" else ""
    return [
        f"CREATE TABLE IF NOT EXISTS {VERSION_TABLE} (id smallint PRIMARY KEY CHECK (id = 1), version {kind} NOT NULL)",
        f"{insert} {VERSION_TABLE} VALUES (1, {_CLOCK_MS[vendor]}){conflict}",
    ]


def installed_triggers(cursor, vendor: str, prefix: str = TRIGGER_PREFIX) -> dict[tuple[str, str], str]:
    """(table, trigger name) -> what identifies its definition (PostgreSQL: its comment; SQLite:
    its SQL), for the triggers whose name starts with `prefix`."""
    if vendor == "postgresql":
        cursor.execute(
            "SELECT t.tgrelid::regclass::text, t.tgname, coalesce(obj_description(t.oid, 'pg_trigger'), '')"
            " FROM pg_trigger t WHERE NOT t.tgisinternal AND t.tgname LIKE %s",
            [prefix.replace("_", r"\_") + "%"],
        )
    else:
        cursor.execute("SELECT tbl_name, name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE %s"
                       r" ESCAPE '\'", [prefix.replace("_", r"\_") + "%"])
    return {(table.strip('"'), name): definition for table, name, definition in cursor.fetchall()}


def install_functions(cursor, functions: dict[str, tuple[str, str]]) -> list[str]:
    """PostgreSQL: create or replace each plpgsql function (name -> (what it returns, its body))
    whose stored body differs; answers the ones (re)created, as "name()"."""
    done = []
    for function, (returns, body) in functions.items():
        cursor.execute("SELECT prosrc FROM pg_proc WHERE oid = to_regprocedure(%s)", [f"{function}()"])
        row = cursor.fetchone()
        if row is None or row[0] != body:
            cursor.execute(f"CREATE OR REPLACE FUNCTION {function}() RETURNS {returns} LANGUAGE plpgsql "
                           "AS $$" + body + "$$")
            done.append(f"{function}()")
    return done


def install_triggers(cursor, vendor: str, quote, wanted: list[Trigger], prefix: str) -> list[str]:
    """Make every trigger of `wanted` exist as defined, dropping any other trigger named with
    `prefix`; answers the ones (re)created, as "table.trigger"."""
    installed = installed_triggers(cursor, vendor, prefix)
    expected = {(t.table, t.name): (t.digest if vendor == "postgresql" else t.sql) for t in wanted}
    for (table, name), definition in installed.items():
        if expected.get((table, name)) != definition:
            on = f" ON {quote(table)}" if vendor == "postgresql" else ""
            cursor.execute(f"DROP TRIGGER IF EXISTS {name}{on}")
    done = []
    for trigger in wanted:
        if installed.get((trigger.table, trigger.name)) == expected[trigger.table, trigger.name]:
            continue
        cursor.execute(trigger.sql)
        if vendor == "postgresql":
            cursor.execute(f"COMMENT ON TRIGGER {trigger.name} ON {quote(trigger.table)} IS '{trigger.digest}'")
        done.append(f"{trigger.table}.{trigger.name}")
    return done


def install(connection) -> list[str]:
    """Make the counter, the bump function and every trigger of `wanted_triggers()` exist as
    defined here, dropping any other fleet_list_version trigger. Idempotent; answers what it
    (re)created ("table.trigger"), empty when everything was in place."""
    vendor, quote = connection.vendor, connection.ops.quote_name
    wanted = wanted_triggers(connection)
    done = []
    with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
        for statement in _counter_statements(vendor):
            cursor.execute(statement)
        if vendor == "postgresql":
            done += install_functions(cursor, FUNCTIONS)
        done += install_triggers(cursor, vendor, quote, wanted, TRIGGER_PREFIX)
    return done


def install_after_migrate(sender, *, using: str, **kwargs) -> None:
    """post_migrate (agents.apps): once the migration that introduced these definitions is
    applied, keep them in place (a migrate back to an older schema is left alone)."""
    connection = connections[using]
    if connection.vendor not in ("postgresql", "sqlite"):
        return
    if INSTALLED_BY not in MigrationRecorder(connection).applied_migrations():
        return
    install(connection)
