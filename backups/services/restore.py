"""POST /agents/:id/backups/:bid/restore: a completed backup back into its agent, or into a new
one through a migration draft (agents.files.drafts), the same roads an uploaded bundle takes.

Into the same agent, in the background (the bundle may take minutes to come from its
destination, and no request waits on it): the request checks what it can at once and queues the
job (ids only). The job fetches and checks the bundle first (nothing is stopped for a backup that
cannot be read: a destination down is tried again like a backup's), puts it where provisioning
looks for a migrated agent's state (`import_path`), and stops and redeploys the agent under its
row lock: its workload is recreated on the state it kept, the bundle's `state/` is written over it
before the runtime starts (the provisioning restore step, every backend with state operations),
and the agent keeps its id, name, settings and secrets files (an export carries none). The
outcome is an event: `backup.restored`, or `backup.restore_failed`.
"""

from __future__ import annotations

import logging
import os
import tempfile
import uuid
from typing import BinaryIO

from django.db import transaction

from agents.events import agent_event
from agents.files.bundle import bundle_validate
from agents.files.drafts import MigrationDraft, import_path, migration_draft_create, migration_drafts_quota_check
from agents.models import IN_FLIGHT, Agent
from agents.services.lifecycle import agent_lock, agent_redeploy, agent_stop
from fleet.errors import FleetError, InvalidState, NotFound, UpstreamFailure
from fleet.task_queue import task_named

from ..destinations import storage_of
from ..errors import BackupNotCompleted
from ..models import Backup, BackupStatus
from ..scrub import scrubbed
from ..storage import StorageError, StorageUrlInvalid
from .runs import BackupAttemptFailed, retryable_failure

logger = logging.getLogger(__name__)

RESTORE_TASK = "backups.tasks.restore_backup"


class BackupUnreadable(UpstreamFailure):  # 502
    code = "backup_storage_failed"
    default_message = "The backup could not be read from its destination."


def _require_completed(backup: Backup) -> None:
    if backup.status != BackupStatus.COMPLETED:
        raise BackupNotCompleted(f"Only a completed backup can be restored (this one is {backup.status}).")


def _require_restorable(agent: Agent) -> None:
    if agent.is_external:
        raise InvalidState("An adopted agent's state is not Fleet's to restore.")
    if agent.status in IN_FLIGHT:
        raise InvalidState(f"The agent is still being deployed ({agent.status}); restore once it is done.")


def _fetch(backup: Backup, into: BinaryIO) -> None:
    storage = None
    try:
        storage = storage_of(backup)
        storage.fetch(backup.object_key, into)
    except (StorageError, StorageUrlInvalid) as exc:
        raise BackupUnreadable(scrubbed(str(exc), storage.secrets if storage is not None else ())) from None


def backup_restore_into_agent(*, backup: Backup) -> Agent:
    """Queue the restore of `backup` into its agent once the caller's transaction commits (module
    docstring) and answer the agent as it is now. 400 for an adopted agent or one still being
    deployed; 409 for a backup not completed. A broker that refuses the job is the caller's 503."""
    _require_completed(backup)
    _require_restorable(backup.agent)
    transaction.on_commit(lambda: task_named(RESTORE_TASK).delay(str(backup.pk)))
    return backup.agent


def backup_restore_perform(*, backup_id, retrying_after: bool) -> Agent | None:
    """The restore job's attempt: fetch and check the bundle, then stop and redeploy the agent on
    it; None when the backup is gone. A failure emits `backup.restore_failed` (`willRetry` when
    the destination may come back and `retrying_after`) and raises BackupAttemptFailed."""
    backup = Backup.objects.select_related("agent").filter(pk=backup_id).first()
    if backup is None:
        return None
    try:
        return _restore(backup)
    except NotFound:
        logger.info("Backup %s was not restored: its agent was deleted meanwhile", backup.pk)
        return None
    except FleetError as exc:
        retryable = retryable_failure(exc)  # the destination or the engine may come back
        _restore_failed(backup, exc.message, will_retry=retryable and retrying_after)
        raise BackupAttemptFailed(exc.message, retryable=retryable) from exc


def _restore(backup: Backup) -> Agent:
    _require_completed(backup)
    agent = backup.agent
    waiting = import_path(agent.pk)
    waiting.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    partial = waiting.with_name(f".{waiting.name}.{uuid.uuid4().hex}")
    try:
        with open(partial, "w+b") as spool:
            _fetch(backup, spool)
            spool.seek(0)
            manifest = bundle_validate(spool)
        if manifest.get("runtime_family") != agent.runtime_family:
            raise InvalidState(f"The backup is of a {manifest.get('runtime_family')} agent; "
                               f"this agent runs {agent.runtime_family}.")
        with transaction.atomic():
            # Checked again under the lock: the agent may have changed while the bundle came, and
            # the bundle is put in place only once this restore is the one that redeploys it.
            agent = agent_lock(agent.pk)
            _require_restorable(agent)
            os.replace(partial, waiting)  # provisioning takes the bundle whole, or not at all
            try:
                agent = agent_redeploy(agent=agent_stop(agent=agent))
                agent_event(agent, "backup.restored", f"Agent {agent.name} is being redeployed on its backup "
                            f"of {backup.created_at:%Y-%m-%d %H:%M} UTC.", backupId=str(backup.pk))
            except BaseException:
                waiting.unlink(missing_ok=True)  # a later redeploy must not restore a bundle nobody asked for now
                raise
    finally:
        partial.unlink(missing_ok=True)
    return agent


def _restore_failed(backup: Backup, message: str, *, will_retry: bool) -> None:
    agent_event(backup.agent, "backup.restore_failed",
                f"Restoring agent {backup.agent.name} from its backup failed: {message}",
                backupId=str(backup.pk), willRetry=will_retry)
    logger.warning("Restoring backup %s into agent %s failed%s: %s", backup.pk, backup.agent_id,
                   " (will retry)" if will_retry else "", message)


def backup_restore_as_draft(*, backup: Backup, user) -> MigrationDraft:
    """A migration draft of `user` holding the backup's bundle: POST /agents/deploy with
    `migration_draft_id` makes the new agent (its state restored before it first starts). 409
    draft_quota_exceeded as for an upload; 409 for a backup not completed; 502 as above."""
    _require_completed(backup)
    migration_drafts_quota_check(user=user, adding_bytes=backup.size or 0)
    with tempfile.TemporaryFile(prefix="fleet-backup-") as spool:
        _fetch(backup, spool)
        size = spool.tell()
        spool.seek(0)
        return migration_draft_create(user=user, upload=spool, size=size)
