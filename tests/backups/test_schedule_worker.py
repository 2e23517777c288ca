"""The schedule through a real Celery worker on Redis: the beat job's task queues the due
backup, the worker stores it, and the policy's retention keeps only `keep` copies."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.apps import apps
from django.utils import timezone

from agents.backends.engine import backend_of
from backups.models import Backup, BackupPolicy
from backups.tasks import queue_due
from fleet.celery import app
from tests.factories.agents import place_on_engine

pytestmark = [pytest.mark.worker, pytest.mark.docker]


def test_the_tick_is_declared_every_minute_and_registered():
    [job] = apps.get_app_config("backups").periodic_tasks
    assert (job.task, job.every_seconds) == ("backups.tasks.queue_due", 60)
    assert job.task in app.tasks and "backups.tasks.run_backup" in app.tasks


def test_scheduled_backups_run_on_the_worker_and_only_keep_copies_stay(
        tenancy, docker_settings, backup_settings, tmp_path, celery_worker_live):
    agent = place_on_engine(tenancy.agent(name="nightly"))
    try:
        policy = BackupPolicy.objects.create(agent=agent, schedule="0 3 * * *", keep=1,
                                             next_run_at=timezone.now() - timedelta(seconds=1))
        taken = []
        for _ in range(2):
            queue_due.delay()
            backup = celery_worker_live.wait_until(
                lambda: Backup.objects.filter(agent=agent, status="completed").exclude(pk__in=taken).first(),
                timeout=60)
            taken.append(backup.pk)
            BackupPolicy.objects.filter(pk=policy.pk).update(next_run_at=timezone.now() - timedelta(seconds=1))

        celery_worker_live.wait_until(lambda: Backup.objects.filter(agent=agent).count() == 1)  # pruned after
        [kept] = Backup.objects.filter(agent=agent)
        assert (kept.pk, kept.trigger, kept.status) == (taken[1], "schedule", "completed")
        folder = tmp_path / "backups" / agent.pk.hex
        assert [path.name for path in folder.iterdir()] == [kept.object_key.rsplit("/", 1)[1]]
    finally:
        backend_of(agent).remove(agent)
