"""POST /agents/:id/backups/:bid/restore: a completed backup back into its agent, or into a new
one through a migration draft (agents.files.drafts), the same roads an uploaded bundle takes.

Into the same agent: the bundle is fetched and checked first (nothing is stopped for a backup
that cannot be read), then put where provisioning looks for a migrated agent's state
(`import_path`), and the agent is stopped and redeployed: its workload is recreated on the
state it kept, the bundle's `state/` is written over it before the runtime starts (the
provisioning restore step, every backend with state operations), and the agent keeps its id,
name, settings and secrets files (an export carries none; the kept ones stay).
"""

from __future__ import annotations

import os
import tempfile
import uuid
from typing import BinaryIO

from django.db import transaction

from agents.events import agent_event
from agents.files.bundle import bundle_validate
from agents.files.drafts import MigrationDraft, import_path, migration_draft_create, migration_drafts_quota_check
from agents.models import IN_FLIGHT, Agent
from agents.services.lifecycle import agent_redeploy, agent_stop
from fleet.errors import InvalidState, UpstreamFailure

from ..destinations import storage_of
from ..errors import BackupNotCompleted
from ..models import Backup, BackupStatus
from ..scrub import scrubbed
from ..storage import StorageError, StorageUrlInvalid


class BackupUnreadable(UpstreamFailure):  # 502
    code = "backup_storage_failed"
    default_message = "The backup could not be read from its destination."


def _require_completed(backup: Backup) -> None:
    if backup.status != BackupStatus.COMPLETED:
        raise BackupNotCompleted(f"Only a completed backup can be restored (this one is {backup.status}).")


def _fetch(backup: Backup, into: BinaryIO) -> None:
    storage = None
    try:
        storage = storage_of(backup)
        storage.fetch(backup.object_key, into)
    except (StorageError, StorageUrlInvalid) as exc:
        raise BackupUnreadable(scrubbed(str(exc), storage.secrets if storage is not None else ())) from None


def backup_restore_into_agent(*, backup: Backup) -> Agent:
    """Stop the agent and redeploy it on the backup's state (module docstring); answers the
    agent as queued. 400 for an adopted agent or one still being deployed, or a backup of
    another runtime family; 409 for a backup not completed; 502 when the destination fails."""
    _require_completed(backup)
    agent = backup.agent
    if agent.is_external:
        raise InvalidState("An adopted agent's state is not Fleet's to restore.")
    if agent.status in IN_FLIGHT:
        raise InvalidState(f"The agent is still being deployed ({agent.status}); restore once it is done.")
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
        os.replace(partial, waiting)  # provisioning takes the bundle whole, or not at all
    finally:
        partial.unlink(missing_ok=True)
    try:
        with transaction.atomic():
            agent = agent_stop(agent=agent)
            agent = agent_redeploy(agent=agent)
            agent_event(agent, "backup.restored", f"Agent {agent.name} is being redeployed on its backup "
                        f"of {backup.created_at:%Y-%m-%d %H:%M} UTC.", backupId=str(backup.pk))
    except BaseException:
        waiting.unlink(missing_ok=True)  # a later redeploy must not restore a bundle nobody asked for now
        raise
    return agent


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
