"""A policy's retention, after each completed backup: the newest `keep` completed backups stay;
older ones go (object first, then row, so a row never outlives nothing or points at nothing it
claims to hold), and so do failed rows older than the newest completed one (they are history the
success made moot)."""

from __future__ import annotations

import logging

from ..destinations import storage_of
from ..models import Backup, BackupPolicy, BackupStatus
from ..scrub import scrubbed
from ..storage import StorageError, StorageUrlInvalid

logger = logging.getLogger(__name__)


def backups_prune(*, agent_id) -> int:
    """Apply the agent's policy; how many backups went. Without a policy nothing is pruned. A
    destination that fails to delete keeps the row (pruned again after the next backup)."""
    policy = BackupPolicy.objects.filter(agent_id=agent_id).only("keep").first()
    if policy is None:
        return 0
    completed = list(Backup.objects.filter(agent_id=agent_id, status=BackupStatus.COMPLETED)
                     .order_by("-completed_at", "-created_at"))
    removed = 0
    for old in completed[policy.keep:]:
        storage = None
        try:
            storage = storage_of(old)
            storage.delete(old.object_key)
        except (StorageError, StorageUrlInvalid) as exc:
            logger.warning("Backup %s of agent %s could not be deleted by retention: %s", old.pk, agent_id,
                           scrubbed(str(exc), storage.secrets if storage is not None else ()))
            continue
        old.delete()
        removed += 1
    if completed:
        stale, _ = Backup.objects.filter(agent_id=agent_id, status=BackupStatus.FAILED,
                                         created_at__lt=completed[0].created_at).delete()
        removed += stale
    return removed
