"""Backups of an agent on a real container (the test runtime image) to a folder and to the
loopback S3 server: the row completes only once the object is whole; the destination down marks
it failed with `backup.failed`, the task tries again, and a later success completes the same row;
retention keeps `keep` copies; the every-minute tick queues what is due, once."""

from __future__ import annotations

import io
import tarfile
from datetime import timedelta

import pytest
from django.utils import timezone

from agents.backends.engine import backend_of
from backups.destinations import storage_of
from backups.models import Backup, BackupPolicy
from backups.services import backup_perform, backup_request, backups_queue_due
from backups.services.runs import BackupAttemptFailed
from backups.tasks import run_backup
from fleet.models import Event
from tests.factories.agents import place_on_engine
from tests.infra.s3 import SECRET_ACCESS_KEY

pytestmark = [pytest.mark.django_db, pytest.mark.docker]


@pytest.fixture
def agent(tenancy, docker_settings):
    agent = place_on_engine(tenancy.agent(name="backed-up"))
    backend_of(agent).write_file(agent, "notes/plan.md", b"# the plan\n")
    yield agent
    backend_of(agent).remove(agent)


def _policy(agent, *, keep=3, schedule="0 3 * * *", next_run_at=None) -> BackupPolicy:
    return BackupPolicy.objects.create(agent=agent, schedule=schedule, keep=keep,
                                       next_run_at=next_run_at or timezone.now() + timedelta(hours=1))


def _kinds(agent) -> list[str]:
    return list(Event.objects.filter(agent_id=agent.pk, kind__startswith="backup.")
                .order_by("occurred_at").values_list("kind", flat=True))


def _bundle_names(backup) -> list[str]:
    spool = io.BytesIO()
    storage_of(backup).fetch(backup.object_key, spool)
    spool.seek(0)
    with tarfile.open(fileobj=spool, mode="r:gz") as archive:
        return archive.getnames()


def test_a_backup_to_the_folder_completes_with_the_agent_state(agent, backup_settings, tmp_path):
    backup = backup_request(agent=agent)
    assert backup.status == "running"

    backup_perform(backup_id=backup.pk, retrying_after=True)

    backup.refresh_from_db()
    assert (backup.status, backup.error) == ("completed", "")
    stored = tmp_path / "backups" / backup.object_key
    assert stored.stat().st_size == backup.size > 0 and backup.completed_at
    assert {"manifest.json", "state/notes/plan.md"} <= set(_bundle_names(backup))
    assert _kinds(agent) == ["backup.completed"]


def test_a_backup_to_s3_is_listed_completed_once_the_object_is_there(agent, backup_settings, s3_server):
    backup_settings.BACKUP_STORAGE_URL = s3_server.storage_url("fleet")
    backup = backup_request(agent=agent)

    run_backup.apply(args=[str(backup.pk)])

    backup.refresh_from_db()
    assert backup.status == "completed"
    assert s3_server.keys() == [f"fleet/{backup.object_key}"]
    assert "state/notes/plan.md" in _bundle_names(backup)


def test_the_destination_down_fails_the_attempt_emits_backup_failed_and_retries(
        agent, backup_settings, s3_server_own):
    backup_settings.BACKUP_STORAGE_URL = s3_server_own.storage_url()
    backup = backup_request(agent=agent)
    s3_server_own.stop()

    result = run_backup.apply(args=[str(backup.pk)])  # eager: its retries run at once

    backup.refresh_from_db()
    assert backup.status == "failed" and "could not be stored at the S3 destination" in backup.error
    assert SECRET_ACCESS_KEY not in backup.error
    failures = Event.objects.filter(agent_id=agent.pk, kind="backup.failed").order_by("occurred_at")
    assert failures.count() == 3  # the attempt and BACKUP_RETRIES=2 more
    assert [event.data["willRetry"] for event in failures] == [True, True, False]
    assert all(SECRET_ACCESS_KEY not in (event.message + str(event.data)) for event in failures)
    assert not Backup.objects.filter(status="completed").exists()
    assert result.successful()  # given up after the last retry, the row says why


def test_a_later_attempt_that_succeeds_completes_the_failed_row(agent, backup_settings, s3_server_own, s3_server):
    backup_settings.BACKUP_STORAGE_URL = s3_server_own.storage_url()
    backup = backup_request(agent=agent)
    s3_server_own.stop()
    with pytest.raises(BackupAttemptFailed) as failed:
        backup_perform(backup_id=backup.pk, retrying_after=True)
    assert failed.value.retryable
    backup.refresh_from_db()
    assert backup.status == "failed"
    assert s3_server_own.port  # the same destination comes back (a server on that port again)
    s3_server_own.start()
    s3_server_own.create_bucket()

    backup_perform(backup_id=backup.pk, retrying_after=True)

    backup.refresh_from_db()
    assert (backup.status, backup.error) == ("completed", "")
    assert s3_server_own.keys() == [backup.object_key]
    assert _kinds(agent) == ["backup.failed", "backup.completed"]


def test_retention_keeps_the_newest_completed_and_drops_older_failures(agent, backup_settings, tmp_path):
    _policy(agent, keep=2)
    failed_early = Backup.objects.create(agent=agent, trigger="manual", status="failed", object_key="", error="x")
    made = []
    for _ in range(3):
        backup = backup_request(agent=agent)
        backup_perform(backup_id=backup.pk, retrying_after=False)
        made.append(backup)

    kept = list(Backup.objects.filter(agent=agent).order_by("created_at"))
    assert [b.pk for b in kept] == [made[1].pk, made[2].pk]
    assert not Backup.objects.filter(pk=failed_early.pk).exists()
    on_disk = sorted(p.name for p in (tmp_path / "backups" / agent.pk.hex).iterdir())
    assert on_disk == sorted(b.object_key.rsplit("/", 1)[1] for b in kept)


def test_the_tick_queues_each_due_policy_once_and_moves_it_to_the_next_time(agent, tenancy):
    now = timezone.now()
    policy = _policy(agent, schedule="*/5 * * * *", next_run_at=now - timedelta(minutes=1))
    not_due = _policy(tenancy.agent(name="later"), next_run_at=now + timedelta(minutes=10))

    assert backups_queue_due(now=now) == 1
    assert backups_queue_due(now=now) == 0  # the same minute again: nothing twice

    [scheduled] = Backup.objects.filter(agent=agent)
    assert (scheduled.trigger, scheduled.status) == ("schedule", "running")
    policy.refresh_from_db()
    assert now < policy.next_run_at <= now + timedelta(minutes=5) and policy.next_run_at.minute % 5 == 0
    assert not Backup.objects.filter(agent_id=not_due.agent_id).exists()


def test_a_scheduled_run_of_an_agent_without_a_workload_is_a_failed_backup_with_its_event(tenancy):
    agent = tenancy.agent(name="never-deployed")
    _policy(agent, next_run_at=timezone.now() - timedelta(seconds=1))

    backups_queue_due()

    [failed] = Backup.objects.filter(agent=agent)
    assert (failed.trigger, failed.status) == ("schedule", "failed") and "no workload" in failed.error
    assert _kinds(agent) == ["backup.failed"]


def test_a_backup_running_past_its_deadline_is_failed_as_lost(agent, backup_settings):
    backup = backup_request(agent=agent)
    Backup.objects.filter(pk=backup.pk).update(created_at=timezone.now() - timedelta(hours=7))

    backups_queue_due()

    backup.refresh_from_db()
    assert backup.status == "failed" and "did not finish" in backup.error


def test_a_folder_that_cannot_be_written_fails_the_backup_and_leaves_no_file(agent, backup_settings, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the backup folder should be")
    backup_settings.BACKUP_STORAGE_URL = f"file://{blocker}/backups"
    backup = backup_request(agent=agent)

    run_backup.apply(args=[str(backup.pk)])

    backup.refresh_from_db()
    assert backup.status == "failed" and "backup folder could not be written" in backup.error
    assert Event.objects.filter(agent_id=agent.pk, kind="backup.failed").count() == 3
    assert blocker.read_text() == "a file where the backup folder should be"
    assert not Backup.objects.filter(status="completed").exists()
