"""GET/POST /api/agents/:id/backups and POST .../backups/:bid/restore: the answers, every
refusal, and restoring as a new agent's migration draft (the same agent: test_restore_real.py)."""

from __future__ import annotations

import io
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from agents.files.drafts import import_path, migration_draft_get
from backups.models import Backup
from backups.services import BackupAttemptFailed, backup_restore_perform
from backups.storage import FolderStorage
from backups.tasks import restore_backup
from fleet.models import Event
from tests.agents.files.bundles import bundle

pytestmark = pytest.mark.django_db

KEYS = {"id", "status", "trigger", "size", "createdAt", "completedAt", "error"}


@pytest.fixture
def deployed(tenancy):
    return tenancy.agent(status="running", container_id="c0ffee")  # the job itself is not run here


def _completed(agent, backup_settings, tmp_path, **fields) -> Backup:
    """A completed backup whose bundle is really at the destination (the test folder)."""
    backup = Backup(agent=agent, trigger="manual", status="completed", size=1, completed_at=timezone.now(),
                    **fields)
    backup.object_key = f"{agent.pk.hex}/{backup.pk.hex}.tar.gz"
    data = bundle(state={"state/memory.md": b"remember me"})
    FolderStorage(tmp_path / "backups").put(backup.object_key, io.BytesIO(data))
    backup.size = len(data)
    backup.save()
    return backup


def _restore(client, agent, backup_id, into="new"):
    return client.post(f"/api/agents/{agent.id}/backups/{backup_id}/restore", {"into": into}, format="json")


def test_an_editor_asks_for_a_backup_and_finds_it_running_in_the_list(tenancy, deployed):
    client = tenancy.client("editor")

    asked = client.post(f"/api/agents/{deployed.id}/backups")

    assert asked.status_code == 202
    assert set(asked.json()) == KEYS
    assert (asked.json()["status"], asked.json()["trigger"], asked.json()["size"]) == ("running", "manual", None)
    assert client.get(f"/api/agents/{deployed.id}/backups").json() == [asked.json()]


def test_the_list_is_newest_first_with_the_failure_reason(tenancy, deployed):
    old = Backup.objects.create(agent=deployed, trigger="schedule", status="failed", object_key="", error="down")
    Backup.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(hours=1))
    new = Backup.objects.create(agent=deployed, trigger="manual", status="completed", object_key="k", size=10,
                                completed_at=timezone.now())

    listed = tenancy.client("key:agents:read").get(f"/api/agents/{deployed.id}/backups").json()

    assert [row["id"] for row in listed] == [str(new.pk), str(old.pk)]
    assert (listed[1]["status"], listed[1]["error"]) == ("failed", "down")
    assert listed[0]["size"] == 10 and listed[0]["completedAt"]


def test_an_agent_without_a_workload_cannot_be_backed_up(tenancy, agent):
    response = tenancy.client("editor").post(f"/api/agents/{agent.id}/backups")

    assert (response.status_code, response.json()["code"]) == (400, "no_container")
    assert not Backup.objects.exists()


@pytest.mark.parametrize(("caller", "method", "status", "code"), [
    ("anonymous", "get", 401, "not_authenticated"),
    ("anonymous", "post", 401, "not_authenticated"),
    ("viewer", "get", 403, "permission_denied"),
    ("viewer", "post", 403, "permission_denied"),
    ("outsider", "get", 404, "not_found"),
    ("outsider", "post", 404, "not_found"),
    ("other-key", "get", 404, "not_found"),
    ("other-key", "post", 404, "not_found"),
    ("key:agents:read", "post", 403, "missing_scope"),
    ("key:workspaces:read", "get", 403, "missing_scope"),
])
def test_who_may_not_list_or_take_backups(tenancy, deployed, caller, method, status, code):
    response = getattr(tenancy.client(caller), method)(f"/api/agents/{deployed.id}/backups")

    assert (response.status_code, response.json()["code"]) == (status, code)
    assert not Backup.objects.exists()


def test_a_key_with_agents_write_takes_a_backup(tenancy, deployed):
    assert tenancy.client("key:agents:write").post(f"/api/agents/{deployed.id}/backups").status_code == 202


def test_restoring_as_a_new_agent_answers_a_migration_draft_of_the_caller(tenancy, deployed, backup_settings,
                                                                          tmp_path):
    backup = _completed(deployed, backup_settings, tmp_path)

    response = _restore(tenancy.client("editor"), deployed, backup.pk)

    assert response.status_code == 201, response.json()
    body = response.json()
    assert set(body) == {"migrationDraftId", "manifest", "expiresAt"}
    draft = migration_draft_get(user=tenancy.editor, draft_id=body["migrationDraftId"])
    assert draft.manifest == body["manifest"] and draft.manifest["runtime_family"] == "openclaw"


@pytest.mark.parametrize(("caller", "status", "code"), [
    ("key:agents:write", 403, "session_required"),
    ("anonymous", 401, "not_authenticated"),
    ("viewer", 403, "permission_denied"),
    ("outsider", 404, "not_found"),
])
def test_who_may_not_restore(tenancy, deployed, backup_settings, tmp_path, caller, status, code):
    backup = _completed(deployed, backup_settings, tmp_path)

    response = _restore(tenancy.client(caller), deployed, backup.pk)

    assert (response.status_code, response.json()["code"]) == (status, code)


def test_a_key_is_refused_restoring_before_the_agent_is_looked_up(tenancy):
    response = _restore(tenancy.client("key:agents:write"), type("A", (), {"id": uuid.uuid4()}), uuid.uuid4())

    assert (response.status_code, response.json()["code"]) == (403, "session_required")


def test_another_agents_backup_or_an_unknown_one_is_404(tenancy, deployed, backup_settings, tmp_path):
    theirs = _completed(tenancy.agent(tenancy.outsider, workspace=tenancy.other_workspace, container_id="x"),
                        backup_settings, tmp_path)
    client = tenancy.client("editor")

    assert _restore(client, deployed, theirs.pk).status_code == 404
    assert _restore(client, deployed, uuid.uuid4()).status_code == 404


@pytest.mark.parametrize("status", ["running", "failed"])
def test_a_backup_that_is_not_completed_is_409(tenancy, deployed, status):
    backup = Backup.objects.create(agent=deployed, trigger="manual", status=status, object_key="k")

    for into in ("same", "new"):
        response = _restore(tenancy.client("editor"), deployed, backup.pk, into=into)
        assert (response.status_code, response.json()["code"]) == (409, "backup_not_completed")


def test_a_restore_needs_into_same_or_new(tenancy, deployed, backup_settings, tmp_path):
    backup = _completed(deployed, backup_settings, tmp_path)

    response = _restore(tenancy.client("editor"), deployed, backup.pk, into="elsewhere")

    assert (response.status_code, response.json()["code"]) == (400, "validation_error")
    assert "into" in response.json()["fields"]


def _restore_events(agent) -> list[tuple[str, dict]]:
    events = Event.objects.filter(agent_id=agent.pk, kind__startswith="backup.").order_by("occurred_at")
    return [(event.kind, event.data) for event in events]


def test_restoring_into_the_agent_queues_the_job_once_the_request_commits_and_answers_the_agent_as_it_is(
        tenancy, deployed, backup_settings, tmp_path, django_capture_on_commit_callbacks, monkeypatch):
    backup = _completed(deployed, backup_settings, tmp_path)
    queued = []
    monkeypatch.setattr(restore_backup, "delay", queued.append)

    with django_capture_on_commit_callbacks() as callbacks:
        response = _restore(tenancy.client("editor"), deployed, backup.pk, into="same")
        assert queued == []  # nothing before the commit

    assert response.status_code == 202, response.json()
    assert response.json() == {"agentId": str(deployed.id), "status": "running"}  # not stopped yet
    for callback in callbacks:
        callback()
    assert queued == [str(backup.pk)]  # the backup's id only


def test_a_backup_missing_from_its_destination_fails_the_restore_with_an_event_and_nothing_is_stopped(
        deployed, backup_settings, tmp_path):
    backup = _completed(deployed, backup_settings, tmp_path)
    (tmp_path / "backups" / backup.object_key).unlink()

    with pytest.raises(BackupAttemptFailed) as failed:
        backup_restore_perform(backup_id=backup.pk, retrying_after=True)

    assert failed.value.retryable  # the destination may have the object again: tried like a backup
    [(kind, data)] = _restore_events(deployed)
    assert (kind, data["backupId"], data["willRetry"]) == ("backup.restore_failed", str(backup.pk), True)
    deployed.refresh_from_db()
    assert deployed.status == "running"
    assert not import_path(deployed.pk).exists()


def test_the_restore_job_tries_a_failing_destination_again_then_gives_up(deployed, backup_settings, tmp_path):
    backup = _completed(deployed, backup_settings, tmp_path)
    (tmp_path / "backups" / backup.object_key).unlink()

    restore_backup.apply(args=[str(backup.pk)])  # eager: its retries run at once

    assert [data["willRetry"] for _, data in _restore_events(deployed)] == [True, True, False]  # BACKUP_RETRIES 2


def test_an_agent_still_deploying_is_not_restored_into(tenancy, backup_settings, tmp_path):
    deploying = tenancy.agent(status="deploying", container_id="")
    backup = _completed(deploying, backup_settings, tmp_path)

    response = _restore(tenancy.client("editor"), deploying, backup.pk, into="same")

    assert (response.status_code, response.json()["code"]) == (400, "invalid_state")


def test_an_agent_that_started_deploying_while_the_bundle_came_is_left_alone(deployed, backup_settings, tmp_path):
    backup = _completed(deployed, backup_settings, tmp_path)
    deployed.status = "queued"
    deployed.save()

    with pytest.raises(BackupAttemptFailed) as failed:
        backup_restore_perform(backup_id=backup.pk, retrying_after=True)

    assert not failed.value.retryable
    [(kind, data)] = _restore_events(deployed)
    assert (kind, data["willRetry"]) == ("backup.restore_failed", False)
    assert not import_path(deployed.pk).exists()  # a later deploy restores nothing nobody asked for


def test_a_backup_of_another_runtime_family_is_not_restored_into_the_agent(tenancy, backup_settings, tmp_path):
    hermes = tenancy.agent(status="stopped", container_id="c", runtime_family="hermes")
    backup = _completed(hermes, backup_settings, tmp_path)  # the bundle says openclaw

    with pytest.raises(BackupAttemptFailed) as failed:
        backup_restore_perform(backup_id=backup.pk, retrying_after=True)

    assert not failed.value.retryable and "openclaw" in failed.value.message
    [(kind, data)] = _restore_events(hermes)
    assert kind == "backup.restore_failed" and data["willRetry"] is False
    hermes.refresh_from_db()
    assert hermes.status == "stopped"


def test_the_restore_of_an_agent_deleted_meanwhile_ends_quietly(deployed, backup_settings, tmp_path):
    backup = _completed(deployed, backup_settings, tmp_path)
    Backup.objects.filter(pk=backup.pk).delete()

    assert backup_restore_perform(backup_id=backup.pk, retrying_after=True) is None


@pytest.mark.django_db(transaction=True)  # the job is published when the request really commits
def test_a_broker_that_cannot_take_the_restore_is_503_and_leaves_the_agent_as_it_was(
        tenancy, deployed, backup_settings, tmp_path, monkeypatch):
    backup = _completed(deployed, backup_settings, tmp_path)

    def refuse(*args, **kwargs):
        raise BrokerError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(restore_backup, "delay", refuse)
    response = _restore(tenancy.client("editor"), deployed, backup.pk, into="same")

    assert (response.status_code, response.json()["code"]) == (503, "broker_unavailable")
    deployed.refresh_from_db()
    assert deployed.status == "running"


def test_a_broker_that_cannot_be_reached_fails_the_backup_instead_of_leaving_it_running(
        tenancy, deployed, monkeypatch, django_capture_on_commit_callbacks):
    from kombu.exceptions import OperationalError

    from backups.tasks import run_backup

    def refuse(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(run_backup, "delay", refuse)
    with django_capture_on_commit_callbacks(execute=True):
        asked = tenancy.client("editor").post(f"/api/agents/{deployed.id}/backups")

    assert asked.status_code == 202
    backup = Backup.objects.get()
    assert backup.status == "failed" and "broker could not be reached" in backup.error
