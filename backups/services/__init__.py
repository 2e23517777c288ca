"""The backups app's writes: policies, runs and their retention, the schedule's tick, restores."""

from .policy import DestinationIn, backup_policy_delete, backup_policy_set
from .restore import BackupUnreadable, backup_restore_as_draft, backup_restore_into_agent, backup_restore_perform
from .runs import BackupAttemptFailed, backup_perform, backup_request
from .scheduled import backups_queue_due

__all__ = ["BackupAttemptFailed", "BackupUnreadable", "DestinationIn", "backup_perform", "backup_policy_delete",
           "backup_policy_set", "backup_request", "backup_restore_as_draft", "backup_restore_into_agent",
           "backup_restore_perform", "backups_queue_due"]
