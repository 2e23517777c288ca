"""The backups app's refusals, in the families of fleet.errors (their HTTP status mapped once)."""

from fleet.errors import Conflict, NotFound

BACKUP_NOT_FOUND = "Backup not found."


class BackupNotFound(NotFound):
    default_message = BACKUP_NOT_FOUND


class BackupPolicyNotFound(NotFound):
    default_message = "The agent has no backup policy; PUT one first."


class BackupNotCompleted(Conflict):  # 409
    code = "backup_not_completed"
    default_message = "Only a completed backup can be restored."
