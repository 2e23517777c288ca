"""Taking a backup: the row first (`running`), the bundle stored by a task, the row `completed`
only once the object is whole at its destination; then the policy's retention.

A failed attempt marks the row `failed` with its error (scrubbed of the destination's
credentials), emits `backup.failed`, and says whether trying again may help (the task retries
with backoff); a later attempt that succeeds makes the same row `completed`.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from agents.events import agent_event
from agents.files.errors import StateKeptChanging
from agents.files.export import agent_export
from agents.models import Agent
from fleet.errors import FleetError, NoContainer, Unavailable, UpstreamFailure
from fleet.task_queue import task_named

from ..destinations import object_key_for, recorded_destination, storage_of
from ..models import Backup, BackupPolicy, BackupStatus, BackupTrigger
from ..scrub import scrubbed
from ..storage import DestinationRefused, StorageError, StorageUrlInvalid
from .retention import backups_prune

logger = logging.getLogger(__name__)

RUN_TASK = "backups.tasks.run_backup"


class BackupAttemptFailed(Exception):
    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.message, self.retryable = message, retryable


def backup_request(*, agent: Agent, trigger: str = BackupTrigger.MANUAL) -> Backup:
    """Record a backup of `agent` as running and queue its job once the transaction commits.
    An agent without a workload of Fleet's (adopted, never deployed) has no state to back up:
    400 no_container on demand; a scheduled run is recorded as failed, so someone hears of it."""
    if agent.is_external or not agent.container_id:
        refusal = NoContainer("The agent has no workload of Fleet's whose state could be backed up.")
        if trigger == BackupTrigger.MANUAL:
            raise refusal
        backup = Backup.objects.create(agent=agent, trigger=trigger, status=BackupStatus.FAILED, object_key="",
                                       error=refusal.message)
        _failed(backup, refusal.message, will_retry=False)
        return backup
    policy = BackupPolicy.objects.filter(agent=agent).first()
    backup = Backup(agent=agent, trigger=trigger, storage=recorded_destination(policy))
    backup.object_key = object_key_for(backup)
    backup.save()

    def publish() -> None:
        try:
            task_named(RUN_TASK).delay(str(backup.pk))  # ids only: never a credential in a message
        except BrokerError as exc:
            logger.warning("The job of backup %s could not be published: %s", backup.pk, exc)
            _failed(backup, "The task broker could not be reached: take the backup again once it is back.",
                    will_retry=False)

    # Published when the caller's transaction commits (an API or console write is one): a broker
    # that refuses the job then fails the row, which the list shows.
    transaction.on_commit(publish)
    return backup


def backup_perform(*, backup_id, retrying_after: bool) -> Backup | None:
    """One attempt of the backup job: export, store, mark; None when the row is gone or done.
    `retrying_after` says whether a failure will be tried again (told in the event)."""
    backup = Backup.objects.select_related("agent").filter(pk=backup_id).first()
    if backup is None or backup.status == BackupStatus.COMPLETED:
        return None
    Backup.objects.filter(pk=backup.pk).update(status=BackupStatus.RUNNING)
    storage = None
    try:
        storage = storage_of(backup)
        with agent_export(agent=backup.agent) as bundle:
            size = storage.put(backup.object_key, bundle)
    except Exception as exc:  # noqa: BLE001 - every failure ends the attempt as `failed`, never `running`
        retryable = retryable_failure(exc)
        message = scrubbed(_error_text(exc), storage.secrets if storage is not None else ())
        _failed(backup, message, will_retry=retryable and retrying_after)
        raise BackupAttemptFailed(message, retryable=retryable) from exc
    return _completed(backup, size)


def retryable_failure(exc: Exception) -> bool:
    """A destination or engine that may come back, or state that may settle; never a refusal."""
    if isinstance(exc, (StorageUrlInvalid, DestinationRefused)):
        return False
    if isinstance(exc, StorageError):
        return True
    return isinstance(exc, (UpstreamFailure, Unavailable, StateKeptChanging))


def _error_text(exc: Exception) -> str:
    if isinstance(exc, FleetError):
        return exc.message
    if isinstance(exc, (StorageError, StorageUrlInvalid)):
        return str(exc)
    logger.exception("Backup attempt failed unexpectedly")
    return "The backup failed on an unexpected error (see the server's log)."


def backups_lost_fail(*, older_than) -> int:
    """Backups still `running` since before `older_than`: their job was lost (a worker killed, a
    broker restarted) or will not end; they become failed, each with its event."""
    lost = list(Backup.objects.select_related("agent").filter(status=BackupStatus.RUNNING, created_at__lt=older_than))
    for backup in lost:
        _failed(backup, "The backup job did not finish in time (its worker may have stopped); take a new backup.",
                will_retry=False)
    return len(lost)


def _failed(backup: Backup, message: str, *, will_retry: bool) -> None:
    with transaction.atomic():
        if not Backup.objects.filter(pk=backup.pk).update(status=BackupStatus.FAILED, error=message):
            return  # the agent, and its backups, were deleted meanwhile
        agent_event(backup.agent, "backup.failed", f"A backup of agent {backup.agent.name} failed: {message}",
                    backupId=str(backup.pk), trigger=backup.trigger, willRetry=will_retry)
    logger.warning("Backup %s of agent %s failed%s: %s", backup.pk, backup.agent_id,
                   " (will retry)" if will_retry else "", message)


def _completed(backup: Backup, size: int) -> Backup | None:
    with transaction.atomic():
        done = Backup.objects.filter(pk=backup.pk).update(status=BackupStatus.COMPLETED, size=size, error="",
                                                          completed_at=timezone.now())
        if not done:
            # The agent was deleted while its bundle was stored: the object has no row to list it.
            storage_of(backup).delete(backup.object_key)
            return None
        backup.refresh_from_db()
        agent_event(backup.agent, "backup.completed", f"Agent {backup.agent.name} was backed up ({size} bytes).",
                    backupId=str(backup.pk), trigger=backup.trigger, size=size)
    logger.info("Backup %s of agent %s completed: %d bytes", backup.pk, backup.agent_id, size)
    backups_prune(agent_id=backup.agent_id)
    return backup
