"""The list version's triggers, second form (see agents.list_triggers for the design).

0007 bumped the counter in every writing statement, so each transaction that wrote agents,
assignments, workspaces, memberships or API keys held the counter's row lock until it ended
(writers queued behind one another, and could deadlock), and it bumped on columns no list
shows. Here, on PostgreSQL: row-level constraint triggers DEFERRABLE INITIALLY DEFERRED (the
counter is taken at commit, last and briefly), at most one bump per transaction, UPDATE only
when a listed column changes, TRUNCATE still by a statement trigger; on SQLite: the same
column conditions. Every bump is GREATEST(version + 1, the clock in ms).

The definitions are frozen here as they stood at this migration. agents.list_triggers holds
the living ones and re-installs them after every migrate (post_migrate); it builds the same
text and comments, so right after this migration it finds nothing to change.
"""

import hashlib

from django.db import migrations

# Table -> the columns whose change by an UPDATE bumps the version (at this migration).
WATCHED = {
    "agents_agent": ("id", "name", "status", "runtime_family", "deploy_target", "execution_target_id",
                     "sandbox_profile", "vcpu", "ram_mb", "disk_gb", "node", "container_id", "paused_reason",
                     "last_error", "created_at", "owner_id"),
    "agents_workspaceagent": ("id", "agent_id", "workspace_id", "role"),
    "workspaces_workspace": ("id", "name"),
    "workspaces_membership": ("id", "workspace_id", "user_id", "role"),
    "workspaces_apikey": ("id", "workspace_id", "created_by_id", "digest", "scopes", "revoked_at"),
    "accounts_user": ("id", "role", "is_active", "token_version"),
}
OLD_TABLES = ("agents_agent", "agents_workspaceagent", "workspaces_workspace", "workspaces_membership",
              "workspaces_apikey")
OLD_USER_COLUMNS = ("role", "is_active", "token_version")

PG_CLOCK_MS = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint"
SQLITE_CLOCK_MS = "CAST((julianday('now') - 2440587.5) * 86400000 AS integer)"
FUNCTION_BODY = f"""
BEGIN
    IF current_setting('fleet.list_bumped', true) IS DISTINCT FROM 'on' THEN
        UPDATE fleet_list_version SET version = GREATEST(version + 1, {PG_CLOCK_MS}) WHERE id = 1;
        PERFORM set_config('fleet.list_bumped', 'on', true);
    END IF;
    RETURN NULL;
END
"""
READ_FUNCTION_BODY = """
BEGIN
    PERFORM set_config('fleet.list_bumped', '', true);
    SET CONSTRAINTS fleet_list_version_write, fleet_list_version_change IMMEDIATE;
    SET CONSTRAINTS fleet_list_version_write, fleet_list_version_change DEFERRED;
    RETURN (SELECT version FROM fleet_list_version WHERE id = 1);
END
"""
OLD_FUNCTION_BODY = """
    BEGIN
        UPDATE fleet_list_version SET version = version + 1 WHERE id = 1;
        RETURN NULL;
    END """


def _quote(name):
    return f'"{name}"'


def _changed(columns, distinct):
    return " OR ".join(f"OLD.{_quote(c)} {distinct} NEW.{_quote(c)}" for c in columns)


def _commented(table, name, sql):
    digest = "fleet list version " + hashlib.sha256(sql.encode()).hexdigest()[:16]
    return [sql, f"COMMENT ON TRIGGER {name} ON {_quote(table)} IS '{digest}'"]


def _postgresql_forward():
    statements = [
        *(f"DROP TRIGGER IF EXISTS fleet_list_version ON {table}" for table in (*OLD_TABLES, "accounts_user")),
        "DROP TRIGGER IF EXISTS fleet_list_version_rows ON accounts_user",
        "CREATE OR REPLACE FUNCTION fleet_list_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$"
        + FUNCTION_BODY + "$$",
        # The version as a transaction that wrote sees it: its pending bumps fired first.
        "CREATE OR REPLACE FUNCTION fleet_list_version_read() RETURNS bigint LANGUAGE plpgsql AS $$"
        + READ_FUNCTION_BODY + "$$",
    ]
    run = "EXECUTE FUNCTION fleet_list_version_bump()"
    deferred = "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW"
    for table, columns in WATCHED.items():
        on = _quote(table)
        statements += _commented(table, "fleet_list_version_write", "CREATE CONSTRAINT TRIGGER "
                                 f"fleet_list_version_write AFTER INSERT OR DELETE ON {on} {deferred} {run}")
        statements += _commented(table, "fleet_list_version_change", "CREATE CONSTRAINT TRIGGER "
                                 f"fleet_list_version_change AFTER UPDATE ON {on} {deferred} "
                                 f"WHEN ({_changed(columns, 'IS DISTINCT FROM')}) {run}")
        statements += _commented(table, "fleet_list_version_truncate", "CREATE TRIGGER "
                                 f"fleet_list_version_truncate AFTER TRUNCATE ON {on} FOR EACH STATEMENT {run}")
    return statements


def _postgresql_backward():
    statements = [
        f"DROP TRIGGER IF EXISTS {name} ON {table}"
        for table in WATCHED
        for name in ("fleet_list_version_write", "fleet_list_version_change", "fleet_list_version_truncate")
    ]
    statements.append("DROP FUNCTION IF EXISTS fleet_list_version_read()")
    statements.append("CREATE OR REPLACE FUNCTION fleet_list_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$"
                      + OLD_FUNCTION_BODY + "$$")
    statements += [
        f"CREATE TRIGGER fleet_list_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table} "
        "FOR EACH STATEMENT EXECUTE FUNCTION fleet_list_version_bump()"
        for table in OLD_TABLES
    ]
    statements += [
        "CREATE TRIGGER fleet_list_version AFTER UPDATE ON accounts_user FOR EACH ROW WHEN ("
        + " OR ".join(f"OLD.{c} IS DISTINCT FROM NEW.{c}" for c in OLD_USER_COLUMNS)
        + ") EXECUTE FUNCTION fleet_list_version_bump()",
        "CREATE TRIGGER fleet_list_version_rows AFTER INSERT OR DELETE OR TRUNCATE ON accounts_user "
        "FOR EACH STATEMENT EXECUTE FUNCTION fleet_list_version_bump()",
    ]
    return statements


def _sqlite_triggers(watched, bump_expression):
    bump = f"BEGIN UPDATE fleet_list_version SET version = {bump_expression} WHERE id = 1; END"
    statements = []
    for table, columns in watched.items():
        for event in ("INSERT", "DELETE"):
            name = f"fleet_list_version_{table}_{event.lower()}"
            statements.append(f"CREATE TRIGGER {name} AFTER {event} ON {_quote(table)} {bump}")
        name = f"fleet_list_version_{table}_update"
        statements.append(f"CREATE TRIGGER {name} AFTER UPDATE ON {_quote(table)} "
                          f"WHEN {_changed(columns, 'IS NOT')} {bump}")
    return statements


def _sqlite_drop():
    return [f"DROP TRIGGER IF EXISTS fleet_list_version_{table}_{event}"
            for table in WATCHED for event in ("insert", "update", "delete")]


def _sqlite_forward():
    return _sqlite_drop() + _sqlite_triggers(WATCHED, f"max(version + 1, {SQLITE_CLOCK_MS})")


def _sqlite_backward():
    old_bump = "BEGIN UPDATE fleet_list_version SET version = version + 1 WHERE id = 1; END"
    statements = _sqlite_drop()
    for table in OLD_TABLES:
        statements += [f"CREATE TRIGGER fleet_list_version_{table}_{event.lower()} AFTER {event} ON {table} {old_bump}"
                       for event in ("INSERT", "UPDATE", "DELETE")]
    statements += [f"CREATE TRIGGER fleet_list_version_accounts_user_{event.lower()} AFTER {event} ON accounts_user "
                   f"{old_bump}" for event in ("INSERT", "DELETE")]
    statements.append("CREATE TRIGGER fleet_list_version_accounts_user_update AFTER UPDATE ON accounts_user WHEN "
                      + " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in OLD_USER_COLUMNS) + f" {old_bump}")
    return statements


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        build = statements_by_vendor.get(schema_editor.connection.vendor)
        if build is None:
            raise NotImplementedError(f"no list version triggers for {schema_editor.connection.vendor}")
        for statement in build():
            schema_editor.execute(statement, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0008_merge_0007_engine_health_0007_list_version"),
    ]

    operations = [
        migrations.RunPython(
            _run({"postgresql": _postgresql_forward, "sqlite": _sqlite_forward}),
            _run({"postgresql": _postgresql_backward, "sqlite": _sqlite_backward}),
        ),
    ]
