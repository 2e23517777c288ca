"""The console's changes, its sign-ins and the management commands each leave their row; the
console's audit page lists and filters rows and changes none."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from accounts.models import UserGroup
from audit.models import AuditEntry
from audit.retention import audit_purge
from audit.services import audit_record

pytestmark = pytest.mark.django_db

INLINE = {"memberships-TOTAL_FORMS": "0", "memberships-INITIAL_FORMS": "0"}


def rows(action_prefix: str) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(action__startswith=action_prefix))


def test_a_console_add_change_and_delete_each_leave_one_row(console, platform_admin):
    console.post("/admin/accounts/usergroup/add/", {"name": "ops", "description": "", **INLINE})
    group = UserGroup.objects.get(name="ops")
    console.post(f"/admin/accounts/usergroup/{group.id}/change/", {"name": "ops2", "description": "on call",
                                                                    **INLINE})
    console.post(f"/admin/accounts/usergroup/{group.id}/delete/", {"post": "yes"})

    made = rows("console.accounts.usergroup.")
    assert [r.action.rsplit(".", 1)[-1] for r in reversed(made)] == ["create", "update", "delete"]
    assert {r.target_id for r in made} == {str(group.id)} and {r.source for r in made} == {"console"}
    assert made[1].detail == ["Name", "Description"] and made[0].actor_user_id == platform_admin.id


def test_console_sign_in_sign_out_and_a_refused_sign_in(platform_admin):
    platform_admin.set_password("the right password")
    platform_admin.save()
    client = Client()

    client.post("/admin/login/", {"username": platform_admin.email, "password": "wrong password"})
    client.post("/admin/login/", {"username": platform_admin.email, "password": "the right password"})
    client.post("/admin/logout/")

    made = [(r.action, r.result, r.actor_label) for r in reversed(rows("console.log"))]
    assert made == [("console.login", "invalid_credentials", platform_admin.email),
                    ("console.login", "ok", platform_admin.email), ("console.logout", "ok", platform_admin.email)]
    assert "wrong password" not in str(list(AuditEntry.objects.values()))


def test_the_audit_page_lists_and_filters_and_changes_nothing(console):
    entry = audit_record(action="agent.start", source="api")
    audit_record(action="agent.stop", source="api")

    assert console.get("/admin/audit/auditentry/").status_code == 200
    filtered = console.get("/admin/audit/auditentry/", {"q": "agent.start", "result": "ok"}).content.decode()
    assert "agent.start" in filtered and "agent.stop" not in filtered
    assert console.get(f"/admin/audit/auditentry/{entry.id}/change/").status_code == 200
    assert console.get("/admin/audit/auditentry/add/").status_code == 403
    console.post(f"/admin/audit/auditentry/{entry.id}/delete/", {"post": "yes"})
    assert AuditEntry.objects.filter(pk=entry.pk).exists()


def test_a_command_leaves_one_row_with_its_option_names_never_their_values():
    call_command("bootstrap_admin", "--email", "root@example.com", "--password", "a strong secret",
                 stdout=StringIO())

    row = AuditEntry.objects.get(source="command")
    assert (row.action, row.result, row.target_id) == ("command.bootstrap_admin", "ok", "bootstrap_admin")
    assert row.detail == ["email", "password"]
    assert "a strong secret" not in str(list(AuditEntry.objects.values()))


def test_a_failing_command_leaves_no_row_and_no_change():
    with pytest.raises(Exception):  # noqa: B017 - the command's own refusal
        call_command("bootstrap_admin", "--email", "not-an-email", "--password", "a strong secret",
                     stdout=StringIO())

    assert not AuditEntry.objects.filter(source="command").exists()


def test_rows_past_the_retention_leave_and_the_rest_stay(settings):
    settings.AUDIT_RETENTION_DAYS = 30
    old, kept = audit_record(action="a", source="api"), audit_record(action="b", source="api")
    AuditEntry.objects.filter(pk=old.pk).update(at=timezone.now() - timedelta(days=31))

    assert audit_purge() == 1
    assert list(AuditEntry.objects.values_list("pk", flat=True)) == [kept.pk]


def test_a_row_is_never_changed_in_place():
    entry = audit_record(action="a", source="api")
    entry.result = "tampered"

    with pytest.raises(Exception, match="never changed"):
        entry.save()
    with pytest.raises(Exception, match="retention"):
        entry.delete()


def test_a_console_list_action_leaves_one_row_naming_the_selected(console, tenancy):
    from tests.factories.workspaces import make_api_key
    from workspaces.models import ApiKey

    key = make_api_key(workspace=tenancy.workspace, scopes=["agents:read"])[0]
    before = AuditEntry.objects.filter(source="console").count()

    console.post("/admin/workspaces/apikey/", {"action": "revoke", "_selected_action": [str(key.id)]})

    row = AuditEntry.objects.filter(source="console").latest("id")
    assert AuditEntry.objects.filter(source="console").count() == before + 1
    assert (row.action, row.target_type, row.target_id, row.result) == (
        "console.workspaces_apikey_changelist.revoke", "workspaces.apikey", str(key.id), "ok")
    assert ApiKey.objects.get(pk=key.pk).revoked_at is not None


def test_a_lifecycle_button_refused_on_the_agent_page_is_recorded_as_an_error(console, tenancy):
    agent = tenancy.agent()  # stopped, no workload: "start" is refused

    page = console.post(f"/admin/agents/agent/{agent.id}/act/start/", follow=True).content.decode()

    row = AuditEntry.objects.filter(source="console").latest("id")
    assert (row.action, row.target_type, row.target_id) == ("console.agents_agent_act.start", "agents.agent",
                                                            str(agent.id))
    assert row.result == "error" and "Could not start" in page  # the refusal, still shown on the next page
    assert list(row.workspace_links.values_list("workspace_id", flat=True)) == [tenancy.workspace.id]
