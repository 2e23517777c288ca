"""The every-minute beat job's work: queue the backups whose schedule has come, and fail the
ones whose job was lost."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..models import BackupPolicy, BackupTrigger
from ..schedule import next_run_after
from .runs import backup_request, backups_lost_fail

BATCH = 100  # policies queued per transaction; the rest at the next tick (or the loop below)


def backups_queue_due(*, now: datetime | None = None) -> int:
    """Queue one backup for each policy whose `next_run_at` has passed and move it to the
    schedule's next time, in the same transaction as the row lock: two beat ticks (or two
    workers) never queue one run twice (SKIP LOCKED: a policy being handled is left to its
    handler). A schedule missed by hours runs once, not once per missed time."""
    now = now or timezone.now()
    queued = 0
    while True:
        with transaction.atomic():
            due = list(BackupPolicy.objects.select_for_update(skip_locked=True, of=("self",))
                       .select_related("agent").filter(next_run_at__lte=now).order_by("next_run_at")[:BATCH])
            for policy in due:
                policy.next_run_at = next_run_after(policy.schedule, now)
                policy.save(update_fields=["next_run_at", "updated_at"])
                backup_request(agent=policy.agent, trigger=BackupTrigger.SCHEDULE)
        queued += len(due)
        if len(due) < BATCH:
            break
    backups_lost_fail(older_than=now - timedelta(seconds=settings.BACKUP_LOST_AFTER_SECONDS))
    return queued
