"""The list version: one counter every write to what GET /agents shows bumps, in the
writing transaction itself, by database triggers, so no code path (ORM, bulk update, cascade,
raw SQL, TRUNCATE) can change a list without changing the version (agents.list_cache)."""

from django.db import migrations

# What a list answer is made of: agents, their assignments, workspaces (names), memberships
# (visibility, roles), API keys (a key's scopes give its role), users (platform-admin role,
# deactivation, token revocation; the other user columns never show in a list).
TABLES = ("agents_agent", "agents_workspaceagent", "workspaces_workspace", "workspaces_membership",
          "workspaces_apikey")
USER_COLUMNS = ("role", "is_active", "token_version")

POSTGRESQL = [
    # One row; started at the clock in ms, so a database re-created from scratch never reuses
    # versions a running process may still hold in its cache.
    "CREATE TABLE fleet_list_version (id smallint PRIMARY KEY CHECK (id = 1), version bigint NOT NULL)",
    "INSERT INTO fleet_list_version VALUES (1, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)",
    """CREATE FUNCTION fleet_list_version_bump() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        UPDATE fleet_list_version SET version = version + 1 WHERE id = 1;
        RETURN NULL;
    END $$""",
    *(
        f"CREATE TRIGGER fleet_list_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table} "
        "FOR EACH STATEMENT EXECUTE FUNCTION fleet_list_version_bump()"
        for table in TABLES
    ),
    "CREATE TRIGGER fleet_list_version AFTER UPDATE ON accounts_user FOR EACH ROW WHEN ("
    + " OR ".join(f"OLD.{c} IS DISTINCT FROM NEW.{c}" for c in USER_COLUMNS)
    + ") EXECUTE FUNCTION fleet_list_version_bump()",
    "CREATE TRIGGER fleet_list_version_rows AFTER INSERT OR DELETE OR TRUNCATE ON accounts_user "
    "FOR EACH STATEMENT EXECUTE FUNCTION fleet_list_version_bump()",
]
POSTGRESQL_REVERSE = [
    *(f"DROP TRIGGER IF EXISTS fleet_list_version ON {table}" for table in (*TABLES, "accounts_user")),
    "DROP TRIGGER IF EXISTS fleet_list_version_rows ON accounts_user",
    "DROP FUNCTION IF EXISTS fleet_list_version_bump()",
    "DROP TABLE IF EXISTS fleet_list_version",
]

_SQLITE_BUMP = "BEGIN UPDATE fleet_list_version SET version = version + 1 WHERE id = 1; END"
SQLITE = [  # SQLite has row triggers only; one writer at a time, so nothing to contend for
    "CREATE TABLE fleet_list_version (id integer PRIMARY KEY CHECK (id = 1), version integer NOT NULL)",
    "INSERT INTO fleet_list_version VALUES (1, CAST((julianday('now') - 2440587.5) * 86400000 AS integer))",
    *(
        f"CREATE TRIGGER fleet_list_version_{table}_{event.lower()} AFTER {event} ON {table} {_SQLITE_BUMP}"
        for table in (*TABLES, "accounts_user")
        for event in ("INSERT", "UPDATE", "DELETE")
        if not (table == "accounts_user" and event == "UPDATE")
    ),
    "CREATE TRIGGER fleet_list_version_accounts_user_update AFTER UPDATE ON accounts_user WHEN "
    + " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in USER_COLUMNS)
    + f" {_SQLITE_BUMP}",
]
SQLITE_REVERSE = ["DROP TABLE IF EXISTS fleet_list_version"] + [
    f"DROP TRIGGER IF EXISTS fleet_list_version_{table}_{event}"
    for table in (*TABLES, "accounts_user") for event in ("insert", "update", "delete")
]


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        statements = statements_by_vendor.get(schema_editor.connection.vendor)
        if statements is None:
            raise NotImplementedError(f"no list version triggers for {schema_editor.connection.vendor}")
        for statement in statements:
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0006_agent_handshake_readiness"),
        ("workspaces", "0002_membership_one_owner"),
        ("accounts", "0003_merge_0002_providerkey_0002_user_token_version"),
    ]

    operations = [
        migrations.RunPython(
            _run({"postgresql": POSTGRESQL, "sqlite": SQLITE}),
            _run({"postgresql": POSTGRESQL_REVERSE, "sqlite": SQLITE_REVERSE}),
        ),
    ]
