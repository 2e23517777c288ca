"""The list version's triggers (agents.list_triggers): installed on every listed table, bumping
once per transaction at its commit, only for writes the list can show, never backwards, never
making one writer wait for another; and kept in place after migrations, on SQLite too."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import OperationalError, connection, models, transaction
from django.db.migrations.recorder import MigrationRecorder
from django.utils import timezone

from accounts.models import User
from agents import list_revisions, list_triggers
from agents.list_cache import list_version
from agents.list_triggers import (
    CHANGE_TRIGGER,
    TRUNCATE_TRIGGER,
    WRITE_TRIGGER,
    install,
    watched_columns,
)
from agents.models import Agent, AssignmentsRevision, WorkspaceAgent
from agents.selectors import agent_list
from fleet.api.principal import Principal
from tests.factories.accounts import UserFactory
from tests.factories.agents import AgentFactory
from tests.factories.workspaces import make_api_key
from tests.support import Tenancy, client_for, in_thread, wait_until
from workspaces.keys import principal_from_api_key
from workspaces.models import ApiKey, Membership, Workspace

ROOT = Path(__file__).resolve().parents[2]


def _committed_version() -> int:
    """The version as committed (a plain read: no pending bump of this transaction fired)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT version FROM fleet_list_version WHERE id = 1")
        return cursor.fetchone()[0]


def _set_version(version: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute("UPDATE fleet_list_version SET version = %s WHERE id = 1", [version])


def _installed() -> dict[str, dict[str, tuple]]:
    """table -> trigger name -> (definition, deferrable, initially deferred)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT t.tgrelid::regclass::text, t.tgname, pg_get_triggerdef(t.oid), t.tgdeferrable, t.tginitdeferred"
            " FROM pg_trigger t WHERE NOT t.tgisinternal AND t.tgname LIKE 'fleet_list_version%%'"
        )
        found: dict[str, dict[str, tuple]] = {}
        for table, name, definition, deferrable, deferred in cursor.fetchall():
            found.setdefault(table, {})[name] = (definition, deferrable, deferred)
    return found


# --- installation -----------------------------------------------------------------------


@pytest.mark.django_db
def test_every_listed_table_has_its_deferred_row_triggers_and_its_truncate_trigger():
    installed = _installed()
    watched = watched_columns()

    assert set(installed) == set(watched) == {
        "agents_agent", "agents_workspaceagent", "workspaces_workspace", "workspaces_membership",
        "workspaces_apikey", "accounts_user"}
    for table, columns in watched.items():
        triggers = installed[table]
        assert set(triggers) == {WRITE_TRIGGER, CHANGE_TRIGGER, TRUNCATE_TRIGGER}, table
        write, change, truncate = triggers[WRITE_TRIGGER], triggers[CHANGE_TRIGGER], triggers[TRUNCATE_TRIGGER]
        assert write[1:] == change[1:] == (True, True), f"{table}: not DEFERRABLE INITIALLY DEFERRED"
        assert "AFTER INSERT OR DELETE" in write[0] and "FOR EACH ROW" in write[0] and "WHEN" not in write[0]
        assert "AFTER UPDATE" in change[0] and "FOR EACH ROW" in change[0]
        assert set(re.findall(r"old\.(\w+)\)?(?:::\w+)? IS DISTINCT FROM \(?new\.\1\b", change[0])) == set(columns)
        assert set(re.findall(r"\bold\.(\w+)", change[0])) == set(columns), table
        assert "AFTER TRUNCATE" in truncate[0] and "FOR EACH STATEMENT" in truncate[0]
        assert truncate[1:] == (False, False)


def test_the_watched_columns_are_what_the_list_reads_and_not_the_busy_columns():
    agent = set(watched_columns()["agents_agent"])

    assert {"name", "status", "last_error", "paused_reason", "container_id", "node", "owner_id",
            "deploy_target", "execution_target_id", "created_at"} <= agent
    assert not agent & {"readiness_failures", "gateway_host_port", "usage_token_digest", "last_handshake_at",
                        "runtime_version", "updated_at", "gateway_token", "container_name"}
    assert set(watched_columns()["workspaces_apikey"]) & {"last_used_at", "name"} == set()
    assert {"name"} <= set(watched_columns()["workspaces_workspace"])
    assert {"role", "user_id", "workspace_id"} <= set(watched_columns()["workspaces_membership"])


@pytest.mark.django_db
def test_install_puts_back_a_dropped_or_changed_trigger_removes_a_stray_one_and_is_idempotent():
    assert install(connection) == []  # the migrated database is as defined

    with connection.cursor() as cursor:
        cursor.execute(f"DROP TRIGGER {WRITE_TRIGGER} ON agents_agent")
        cursor.execute(f"DROP TRIGGER {CHANGE_TRIGGER} ON workspaces_apikey")  # an older definition in its place
        cursor.execute(f"CREATE CONSTRAINT TRIGGER {CHANGE_TRIGGER} AFTER UPDATE ON workspaces_apikey DEFERRABLE "
                       "INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fleet_list_version_bump()")
        cursor.execute("CREATE TRIGGER fleet_list_version_old AFTER INSERT ON workspaces_workspace "
                       "FOR EACH STATEMENT EXECUTE FUNCTION fleet_list_version_bump()")
        cursor.execute("CREATE OR REPLACE FUNCTION fleet_list_version_bump() RETURNS trigger LANGUAGE plpgsql "
                       "AS $$ BEGIN RETURN NULL; END $$")
        cursor.execute("DROP FUNCTION fleet_list_version_read()")

    assert sorted(install(connection)) == [
        "agents_agent.fleet_list_version_write", "fleet_list_version_bump()", "fleet_list_version_read()",
        "workspaces_apikey.fleet_list_version_change"]
    assert install(connection) == []
    installed = _installed()
    assert "fleet_list_version_old" not in installed["workspaces_workspace"]
    assert "WHEN" in installed["workspaces_apikey"][CHANGE_TRIGGER][0]


@pytest.mark.django_db
def test_migrate_puts_back_a_missing_trigger():
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TRIGGER {CHANGE_TRIGGER} ON workspaces_membership")
    assert CHANGE_TRIGGER not in _installed()["workspaces_membership"]

    call_command("migrate", verbosity=0)  # nothing to apply: post_migrate still runs

    assert CHANGE_TRIGGER in _installed()["workspaces_membership"]


def test_on_sqlite_the_triggers_follow_the_column_rules_and_come_back_after_a_table_rebuild(tmp_path):
    """The whole chain of migrations on a new SQLite database, in a process of its own."""
    done = subprocess.run([sys.executable, "-m", "tests.agents.sqlite_list_version", str(tmp_path / "fleet.sqlite3")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])

    def names(table):
        return [f"fleet_list_version_{table}_{event}" for event in ("delete", "insert", "update")]

    assert report["after_migrate"] == {table: names(table) for table in report["watched"]}
    assert report["unlisted"] == dict.fromkeys(report["unlisted"], False)
    assert report["listed"] == dict.fromkeys(report["listed"], True) and len(report["listed"]) == 9
    assert report["after_restore_is_newer"] is True
    # The rebuild took the agents table's triggers with it (and a write then bumped nothing)...
    assert "agents_agent" not in report["after_rebuild"] and report["bumps_after_rebuild"] is False
    # ...and the next migrate put them back.
    assert report["after_second_migrate"] == report["after_migrate"]
    assert report["bumps_after_second_migrate"] is True


# --- what bumps ---------------------------------------------------------------------------


def _another_value(field, value, other_user):
    """A value of `field` other than `value`, valid for the column."""
    if field.is_relation:
        return other_user.pk
    if field.choices:
        return next(choice for choice, _ in field.choices if choice != value)
    if isinstance(field, models.BooleanField):
        return not value
    if isinstance(field, models.FloatField):
        return (value or 0) + 0.5
    if isinstance(field, models.IntegerField):
        return (value or 0) + 1
    if isinstance(field, models.DateTimeField):
        return (value or timezone.now()) - timedelta(days=1)
    return (value or "") + "x"  # CharField, TextField, the encrypted gateway token


@pytest.mark.django_db(transaction=True)
def test_a_write_that_changes_a_list_bumps_and_one_to_a_column_no_list_shows_does_not():
    """Each column of agents in turn: when any caller's list changes, the version moves; it moves
    exactly for the watched columns (what the list builder reads)."""
    t = Tenancy.create()
    agent = t.agent(name="probe", status="running", container_id="c" * 64, gateway_host_port=19001)
    _, secret = make_api_key(workspace=t.workspace, scopes=("agents:read", "agents:write"))
    callers = [Principal(user=t.agent_owner), Principal(user=t.editor), principal_from_api_key(secret)]
    other_user = UserFactory()
    watched = set(watched_columns()["agents_agent"])
    bumped_columns = set()

    for field in Agent._meta.concrete_fields:
        if field.primary_key:
            continue
        bodies = [agent_list(caller) for caller in callers]
        before = _committed_version()
        current = getattr(Agent.objects.get(pk=agent.pk), field.attname)
        Agent.objects.filter(pk=agent.pk).update(**{field.attname: _another_value(field, current, other_user)})
        bumped = _committed_version() != before
        if [agent_list(caller) for caller in callers] != bodies:
            assert bumped, f"{field.column} changed a list without a new version"
        if bumped:
            bumped_columns.add(field.column)

    assert bumped_columns == watched - {"id"}


@pytest.mark.django_db(transaction=True)
def test_api_key_use_readiness_counts_and_unchanged_saves_leave_the_version_and_the_cache_alone(monkeypatch):
    from agents import list_cache
    from agents.api import agents as agents_api

    t = Tenancy.create()
    agent = t.agent(status="running", container_id="c" * 64)
    key, secret = make_api_key(workspace=t.workspace, scopes=("agents:read",))
    client = client_for(api_key=secret)
    built = []
    original = agents_api.list_body
    monkeypatch.setattr(agents_api, "list_body", lambda *a, **kw: built.append(1) or original(*a, **kw))
    list_cache.forget_bodies()
    assert client.get("/api/agents").status_code == 200
    version, builds = _committed_version(), len(built)

    ApiKey.objects.filter(pk=key.pk).update(last_used_at=timezone.now() - timedelta(minutes=5))
    assert client.get("/api/agents").status_code == 200  # authentication writes last_used_at
    assert ApiKey.objects.get(pk=key.pk).last_used_at > timezone.now() - timedelta(minutes=1)
    Agent.objects.filter(pk=agent.pk).update(readiness_failures=3)
    Agent.objects.filter(pk=agent.pk).update(gateway_host_port=19999, usage_token_digest="f" * 64,
                                             last_handshake_at=timezone.now(), runtime_version="2026.9.6")
    Agent.objects.get(pk=agent.pk).save()  # every column written, none changed (updated_at aside)
    ApiKey.objects.filter(pk=key.pk).update(name="renamed key")

    assert _committed_version() == version
    assert client.get("/api/agents").status_code == 200
    assert len(built) == builds, "the cached body should still be served"
    list_cache.forget_bodies()


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_transaction_or_savepoint_bumps_nothing():
    t = Tenancy.create()
    agent = t.agent()
    version = _committed_version()

    with pytest.raises(RuntimeError), transaction.atomic():
        Agent.objects.filter(pk=agent.pk).update(name="never")
        Membership.objects.filter(workspace=t.workspace, user=t.editor).update(role="admin")
        raise RuntimeError("rolled back")
    with transaction.atomic():
        try:
            with transaction.atomic():
                Workspace.objects.filter(pk=t.workspace.pk).update(name="never")
                raise RuntimeError("savepoint rolled back")
        except RuntimeError:
            pass
        Agent.objects.filter(pk=agent.pk).update(readiness_failures=1)  # the transaction commits this

    assert _committed_version() == version
    assert Agent.objects.get(pk=agent.pk).name != "never"


@pytest.mark.django_db(transaction=True)
def test_a_transaction_bumps_once_at_its_commit_whatever_it_wrote():
    t = Tenancy.create()
    agent = t.agent(status="stopped")
    start = _committed_version()
    _set_version(start + 10_000_000_000)  # ahead of the clock: each bump is then exactly +1
    try:
        version = _committed_version()
        with transaction.atomic():
            Agent.objects.filter(pk=agent.pk).update(name="one")
            Agent.objects.filter(pk=agent.pk).update(name="two")
            WorkspaceAgent.objects.filter(agent=agent).update(role="pager")
            Workspace.objects.filter(pk=t.workspace.pk).update(name="Renamed")
            Membership.objects.filter(workspace=t.workspace, user=t.viewer).delete()
            make_api_key(workspace=t.workspace)
            User.objects.filter(pk=t.viewer.pk).update(is_active=False)
            assert _committed_version() == version  # nothing taken until the commit

        assert _committed_version() == version + 1
        Agent.objects.filter(pk=agent.pk).update(status="running")  # autocommit: its own transaction
        assert _committed_version() == version + 2
    finally:
        _set_version(start)  # the next bump goes past it; the versions issued here are never reached


@pytest.mark.django_db(transaction=True)
def test_a_list_read_inside_a_transaction_sees_its_own_writes_in_the_version():
    t = Tenancy.create()
    agent = t.agent()
    with transaction.atomic():
        first = list_version()
        Agent.objects.filter(pk=agent.pk).update(name="one")
        second = list_version()
        assert list_version() == second  # no write in between
        Agent.objects.filter(pk=agent.pk).update(name="two")
        third = list_version()

    assert first < second < third
    assert _committed_version() == third


@pytest.mark.django_db(transaction=True)
def test_the_version_never_goes_backwards_after_a_restore():
    t = Tenancy.create()
    agent = t.agent()
    Agent.objects.filter(pk=agent.pk).update(name="before the backup was restored")
    handed_out = _committed_version()
    _set_version(5)  # what a backup taken long ago brings back
    wait_until(lambda: time.time() * 1000 > handed_out + 1, timeout=5, interval=0.001)  # past it by a whole ms
    clock_ms = int(time.time() * 1000)

    Agent.objects.filter(pk=agent.pk).update(name="after")

    assert _committed_version() >= clock_ms > handed_out


# --- no writer waits for another ------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_an_open_transaction_that_wrote_an_agent_blocks_no_other_writer():
    """As provisioning does (an agent updated, then a call to the engine): while that
    transaction is open, another agent's update and an API key's last_used_at commit at once.
    Under statement triggers bumping at each write, both waited for the counter's row lock."""
    t = Tenancy.create()
    held, other = t.agent(name="held"), t.agent(name="other")
    key, _ = make_api_key(workspace=t.workspace)
    membership = Membership.objects.get(workspace=t.workspace, user=t.viewer)
    wrote, release = threading.Event(), threading.Event()

    def provisioning() -> None:
        with transaction.atomic():
            Agent.objects.filter(pk=held.pk).update(status="deploying", last_error="Retrying: engine busy")
            wrote.set()
            assert release.wait(30)

    holder = in_thread(provisioning)
    try:
        assert wrote.wait(30)
        version = _committed_version()
        writes = {
            "another agent": lambda: Agent.objects.filter(pk=other.pk).update(status="stopped"),
            "a key's last use": lambda: ApiKey.objects.filter(pk=key.pk).update(last_used_at=timezone.now()),
            "a membership": lambda: Membership.objects.filter(pk=membership.pk).update(role="editor"),
        }
        for what, write in writes.items():
            try:
                with transaction.atomic():
                    with connection.cursor() as cursor:
                        cursor.execute("SET LOCAL lock_timeout = '2s'")
                    write()
            except OperationalError as error:
                pytest.fail(f"{what} waited for the open transaction: {error}")
        after_others = _committed_version()
        assert after_others > version  # the other writers bumped, at their commits
    finally:
        release.set()
        holder.result()

    assert _committed_version() > after_others  # and the held transaction at its own
    assert Agent.objects.get(pk=held.pk).status == "deploying"


def test_post_migrate_waits_for_the_migration_that_introduced_these_definitions():
    """install_after_migrate leaves a database migrated back below it alone; the name must be real."""
    from django.db.migrations.loader import MigrationLoader

    loader = MigrationLoader(None, ignore_no_migrations=True)
    assert list_triggers.INSTALLED_BY in loader.disk_migrations


# --- each agent's list revision (agents.list_revisions) ---------------------------------------


def _revisions(*agents) -> list[int]:
    """Each agent's own list revision as committed."""
    found = dict(Agent.objects.filter(pk__in=[a.pk for a in agents]).values_list("pk", "list_revision"))
    return [found.get(agent.pk) for agent in agents]


def _assigned_revisions(*agents) -> list[int | None]:
    """Each agent's assignments' revision as committed (None: never moved)."""
    found = dict(AssignmentsRevision.objects.filter(agent_id__in=[a.pk for a in agents])
                 .values_list("agent_id", "revision"))
    return [found.get(agent.pk) for agent in agents]


def _revision_triggers() -> dict[tuple[str, str], tuple[str, bool, bool]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT t.tgrelid::regclass::text, t.tgname, pg_get_triggerdef(t.oid), t.tgdeferrable, t.tginitdeferred"
            " FROM pg_trigger t WHERE NOT t.tgisinternal AND t.tgname LIKE 'fleet_list_revision%%'"
        )
        return {(table, name): (definition, deferrable, deferred)
                for table, name, definition, deferrable, deferred in cursor.fetchall()}


@pytest.mark.django_db
def test_the_revision_triggers_are_installed_the_assignment_and_workspace_ones_deferred():
    installed = _revision_triggers()

    assert set(installed) == {
        ("agents_agent", "fleet_list_revision_set"), ("agents_agent", "fleet_list_revision_forget"),
        ("agents_workspaceagent", "fleet_list_revision_write"),
        ("agents_workspaceagent", "fleet_list_revision_change"), ("agents_workspaceagent", "fleet_list_revision_all"),
        ("workspaces_workspace", "fleet_list_revision_change")}
    assert "BEFORE INSERT OR UPDATE" in installed["agents_agent", "fleet_list_revision_set"][0]
    for key in (("agents_workspaceagent", "fleet_list_revision_write"),
                ("agents_workspaceagent", "fleet_list_revision_change"),
                ("workspaces_workspace", "fleet_list_revision_change")):
        assert installed[key][1:] == (True, True), f"{key}: not DEFERRABLE INITIALLY DEFERRED"
    assert "AFTER TRUNCATE" in installed["agents_workspaceagent", "fleet_list_revision_all"][0]
    assert list_revisions.install(connection) == []  # as defined: nothing to do


@pytest.mark.django_db(transaction=True)
def test_an_agent_s_revision_moves_exactly_when_a_listed_column_changes():
    t = Tenancy.create()
    agent = t.agent(name="probe", status="running", container_id="c" * 64, gateway_host_port=19001)
    other_user = UserFactory()
    watched = set(watched_columns()["agents_agent"])
    moved = set()

    for field in Agent._meta.concrete_fields:
        if field.primary_key or field.name == "list_revision":
            continue
        [before] = _revisions(agent)
        current = getattr(Agent.objects.get(pk=agent.pk), field.attname)
        Agent.objects.filter(pk=agent.pk).update(**{field.attname: _another_value(field, current, other_user)})
        [after] = _revisions(agent)
        assert after >= before
        if after != before:
            moved.add(field.column)

    assert moved == watched - {"id"}


@pytest.mark.django_db(transaction=True)
def test_a_save_with_an_older_revision_keeps_the_newer_one_and_a_raw_write_never_lowers_it():
    t = Tenancy.create()
    agent = t.agent()
    stale = Agent.objects.get(pk=agent.pk)
    Agent.objects.filter(pk=agent.pk).update(name="renamed")
    [moved] = _revisions(agent)
    assert moved > stale.list_revision

    stale.readiness_failures = 2
    stale.save(update_fields=["readiness_failures", "list_revision"])  # no listed column changed
    assert _revisions(agent) == [moved]
    Agent.objects.filter(pk=agent.pk).update(list_revision=1)
    assert _revisions(agent) == [moved]
    stale.name = "renamed again"
    stale.save()  # a listed column: a new revision, past the stored one
    assert _revisions(agent)[0] > moved


@pytest.mark.django_db(transaction=True)
def test_assignments_and_workspace_names_move_their_agents_assignment_revisions_at_commit():
    t = Tenancy.create()
    first, second, elsewhere = t.agent(), t.agent(), t.agent(workspace=t.other_workspace)
    unassigned = AgentFactory(owner=t.editor)
    agents = (first, second, elsewhere, unassigned)

    def moves(write) -> list[bool]:
        before, own = _assigned_revisions(*agents), _revisions(*agents)
        with transaction.atomic():
            write()
            assert _assigned_revisions(*agents) == before, "moved before the commit"
        after = _assigned_revisions(*agents)
        assert _revisions(*agents) == own, "an agent's own revision (its row) is not written"
        assert all(new >= old for new, old in zip(after, before, strict=True) if old is not None)
        return [new != old for new, old in zip(after, before, strict=True)]

    assert moves(lambda: WorkspaceAgent.objects.create(workspace=t.workspace, agent=unassigned)) == \
        [False, False, False, True]
    assert moves(lambda: WorkspaceAgent.objects.filter(agent=first).update(role="pager")) == \
        [True, False, False, False]
    assert moves(lambda: WorkspaceAgent.objects.filter(agent=unassigned).update(agent=elsewhere)) == \
        [False, False, True, True]  # moved from one agent to another: both
    assert moves(lambda: WorkspaceAgent.objects.filter(agent=first).delete()) == [True, False, False, False]
    assert moves(lambda: Workspace.objects.filter(pk=t.workspace.pk).update(name="Renamed")) == \
        [False, True, True, False]  # the agents assigned to it now (`first` left it above)
    assert moves(lambda: WorkspaceAgent.objects.filter(agent=second).update(created_at=timezone.now())) == \
        [False, False, False, False]  # a column no row shows
    assert moves(lambda: Membership.objects.filter(workspace=t.workspace, user=t.editor).update(role="admin")) == \
        [False, False, False, False]  # who sees what is the caller's side (agents.list_rows)

    before = _assigned_revisions(*agents)
    with pytest.raises(RuntimeError), transaction.atomic():
        WorkspaceAgent.objects.create(workspace=t.workspace, agent=first)
        raise RuntimeError("rolled back")
    assert _assigned_revisions(*agents) == before

    own = _revisions(*agents)
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE agents_workspaceagent")
    assert all(after > old for after, old in zip(_revisions(*agents), own, strict=True))

    Agent.objects.filter(pk=elsewhere.pk).delete()  # its assignments' revision goes with it
    assert not AssignmentsRevision.objects.filter(agent_id=elsewhere.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_assigning_relabelling_and_renaming_never_wait_for_an_agent_s_row_lock():
    """A lifecycle action holds the agent's row lock across its engine calls: a relabel, a
    rename of its workspace and the removal of an assignment commit at once meanwhile (each moves
    only the assignments' revision, never the agent's row). A new assignment waits, as it always
    did: its foreign key's check shares the agent's row lock."""
    t = Tenancy.create()
    held = t.agent(name="held")
    locked, release = threading.Event(), threading.Event()

    def lifecycle_action() -> None:
        with transaction.atomic():
            Agent.objects.select_for_update().get(pk=held.pk)
            locked.set()
            assert release.wait(30)

    holder = in_thread(lifecycle_action)
    try:
        assert locked.wait(30)
        before = _assigned_revisions(held)[0]
        writes = {
            "a relabel": lambda: WorkspaceAgent.objects.filter(agent=held).update(role="pager"),
            "a rename": lambda: Workspace.objects.filter(pk=t.workspace.pk).update(name="Renamed"),
            "a removal": lambda: WorkspaceAgent.objects.filter(agent=held).delete(),
        }
        for what, write in writes.items():
            try:
                with transaction.atomic():
                    with connection.cursor() as cursor:
                        cursor.execute("SET LOCAL lock_timeout = '2s'")
                    write()
            except OperationalError as error:
                pytest.fail(f"{what} waited for the agent's row lock: {error}")
        assert _assigned_revisions(held)[0] != before
    finally:
        release.set()
        holder.result()


@pytest.mark.django_db(transaction=True)
def test_a_revision_is_never_handed_out_again_after_a_restore_or_a_new_agent_with_the_same_id():
    t = Tenancy.create()
    agent = t.agent()
    Agent.objects.filter(pk=agent.pk).update(name="before the backup was restored")
    [handed_out] = _revisions(agent)
    with connection.cursor() as cursor:  # what a backup taken long ago brings back
        cursor.execute("ALTER TABLE agents_agent DISABLE TRIGGER fleet_list_revision_set")
        cursor.execute("UPDATE agents_agent SET list_revision = 5 WHERE id = %s", [agent.pk])
        cursor.execute("ALTER TABLE agents_agent ENABLE TRIGGER fleet_list_revision_set")
        cursor.execute("SELECT setval('fleet_list_revision_seq', 1)")
    assert _revisions(agent) == [5]

    Agent.objects.filter(pk=agent.pk).update(name="after")
    assert _revisions(agent)[0] > handed_out

    [last] = _revisions(agent)
    fields = {f.attname: getattr(Agent.objects.get(pk=agent.pk), f.attname) for f in Agent._meta.concrete_fields}
    Agent.objects.filter(pk=agent.pk).delete()
    Agent.objects.bulk_create([Agent(**fields)])  # the same id again, the old revision given
    assert _revisions(agent)[0] > last


@pytest.mark.django_db(transaction=True)
def test_install_puts_back_a_missing_revision_trigger_and_moves_every_revision():
    t = Tenancy.create()
    agent = t.agent()
    with connection.cursor() as cursor:
        cursor.execute("DROP TRIGGER fleet_list_revision_change ON workspaces_workspace")
    Workspace.objects.filter(pk=t.workspace.pk).update(name="renamed while the trigger was missing")
    [before] = _revisions(agent)

    call_command("migrate", verbosity=0)  # nothing to apply: post_migrate puts it back

    assert ("workspaces_workspace", "fleet_list_revision_change") in _revision_triggers()
    assert _revisions(agent)[0] > before  # no row kept from while it was missing is used again
    assert list_revisions.install(connection) == []
    assert list_revisions.INSTALLED_BY in MigrationRecorder(connection).applied_migrations()
