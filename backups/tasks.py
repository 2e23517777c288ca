"""Celery tasks of backups: one backup's job, one restore's (ids only in their messages), the
every-minute tick."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from .services import BackupAttemptFailed, backup_perform, backup_restore_perform, backups_queue_due


def _attempt(task, perform, backup_id: str) -> None:
    """One attempt of `perform`; a failure that may pass (destination or engine down) is tried
    again BACKUP_RETRIES times, the wait doubling from BACKUP_RETRY_DELAY_SECONDS."""
    attempts_left = task.request.retries < settings.BACKUP_RETRIES
    try:
        perform(backup_id=backup_id, retrying_after=attempts_left)
    except BackupAttemptFailed as exc:
        if exc.retryable and attempts_left:
            raise task.retry(countdown=settings.BACKUP_RETRY_DELAY_SECONDS * 2 ** task.request.retries) from None


@shared_task(bind=True, name="backups.tasks.run_backup", max_retries=None, soft_time_limit=3600, time_limit=3660)
def run_backup(self, backup_id: str) -> None:
    """Export and store, tried again while it may pass (_attempt)."""
    _attempt(self, backup_perform, backup_id)


@shared_task(bind=True, name="backups.tasks.restore_backup", max_retries=None, soft_time_limit=3600,
             time_limit=3660)
def restore_backup(self, backup_id: str) -> None:
    """Fetch the bundle and redeploy the agent on it, tried again while it may pass (_attempt)."""
    _attempt(self, backup_restore_perform, backup_id)


@shared_task(name="backups.tasks.queue_due", soft_time_limit=50, time_limit=55)
def queue_due() -> None:
    backups_queue_due()
