"""The list version's triggers on SQLite (the default database of `make run`), run by
tests/agents/test_list_triggers.py in a process of its own: `python -m
tests.agents.sqlite_list_version <database file>`. Migrates a new database, writes through the
ORM, rebuilds a table as a migration altering a column would, migrates again, and prints what
it saw as one JSON object."""

from __future__ import annotations

import json
import os
import sys
import time


def main(path: str) -> dict:
    os.environ["DATABASE_URL"] = f"sqlite:///{path}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection, models
    from django.utils import timezone

    from accounts.models import User
    from agents.list_triggers import watched_columns
    from agents.models import Agent, WorkspaceAgent
    from workspaces.models import ApiKey, Membership, Workspace

    def triggers() -> dict[str, list[str]]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT tbl_name, name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'fleet%'")
            found: dict[str, list[str]] = {}
            for table, name in cursor.fetchall():
                found.setdefault(table, []).append(name)
        return {table: sorted(names) for table, names in sorted(found.items())}

    def version() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT version FROM fleet_list_version WHERE id = 1")
            return cursor.fetchone()[0]

    def bumps(write) -> bool:
        before = version()
        write()
        after = version()
        assert after >= before, (before, after)
        return after > before

    report: dict = {"watched": sorted(watched_columns())}
    call_command("migrate", verbosity=0)
    report["after_migrate"] = triggers()

    user = User.objects.create_user(email="owner@example.com")
    workspace = Workspace.objects.create(name="Team", owner=user)
    membership = Membership.objects.create(workspace=workspace, user=user, role="owner")
    agent = Agent.objects.create(owner=user, name="a", status="running")
    assignment = WorkspaceAgent.objects.create(workspace=workspace, agent=agent)
    key = ApiKey.objects.create(workspace=workspace, created_by=user, name="k", prefix="fk_x", digest="d" * 64,
                                scopes=["agents:read"])
    agents = Agent.objects.filter(pk=agent.pk)
    report["unlisted"] = {
        "agent readiness, port, token digest, handshake": bumps(lambda: agents.update(
            readiness_failures=2, gateway_host_port=19001, usage_token_digest="e" * 64, runtime_version="1.2",
            last_handshake_at=timezone.now(), updated_at=timezone.now())),
        "api key last_used_at": bumps(lambda: ApiKey.objects.filter(pk=key.pk).update(last_used_at=timezone.now())),
        "an unchanged agent saved": bumps(lambda: Agent.objects.get(pk=agent.pk).save()),
    }
    report["listed"] = {
        "agent status": bumps(lambda: agents.update(status="stopped")),
        "agent name": bumps(lambda: agents.update(name="b")),
        "assignment label": bumps(lambda: WorkspaceAgent.objects.filter(pk=assignment.pk).update(role="pager")),
        "workspace name": bumps(lambda: Workspace.objects.filter(pk=workspace.pk).update(name="Ops")),
        "membership role": bumps(lambda: Membership.objects.filter(pk=membership.pk).update(role="admin")),
        "api key revoked": bumps(lambda: ApiKey.objects.filter(pk=key.pk).update(revoked_at=timezone.now())),
        "user role": bumps(lambda: User.objects.filter(pk=user.pk).update(role="admin")),
        "agent created": bumps(lambda: Agent.objects.create(owner=user, name="c")),
        "assignment deleted": bumps(lambda: WorkspaceAgent.objects.filter(pk=assignment.pk).delete()),
    }

    # A restore from an older backup: the next bump still goes past every version handed out.
    handed_out = version()
    with connection.cursor() as cursor:
        cursor.execute("UPDATE fleet_list_version SET version = 5 WHERE id = 1")
    while time.time() * 1000 <= handed_out + 1:  # the clock past it by a whole ms
        time.sleep(0.001)
    agents.update(name="after-restore")
    report["after_restore_is_newer"] = version() > handed_out

    # What a later migration altering a column of agents does on SQLite: a new table copied in.
    old_field = Agent._meta.get_field("name")
    new_field = models.CharField(max_length=old_field.max_length + 1)
    new_field.set_attributes_from_name("name")
    new_field.model = Agent
    with connection.schema_editor() as editor:
        editor.alter_field(Agent, old_field, new_field)
    report["after_rebuild"] = triggers()
    report["bumps_after_rebuild"] = bumps(lambda: agents.update(status="running"))
    call_command("migrate", verbosity=0)  # nothing to apply; post_migrate puts the triggers back
    report["after_second_migrate"] = triggers()
    report["bumps_after_second_migrate"] = bumps(lambda: agents.update(status="stopped"))
    return report


if __name__ == "__main__":
    sys.stdout.write(json.dumps(main(sys.argv[1])) + "\n")
