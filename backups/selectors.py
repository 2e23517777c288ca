"""Reads of the backups app; the agent's access is decided first (backups.permissions)."""

from __future__ import annotations

from django.db.models import QuerySet

from agents.models import Agent
from fleet.api.fields import uuid_or_none

from .errors import BackupNotFound, BackupPolicyNotFound
from .models import Backup, BackupPolicy

LIST_LIMIT = 200


def backup_list(*, agent: Agent) -> QuerySet[Backup]:
    """The agent's backups, newest first (at most LIST_LIMIT: retention keeps far fewer)."""
    return Backup.objects.filter(agent=agent).order_by("-created_at").defer("storage")[:LIST_LIMIT]


def backup_get(*, agent: Agent, backup_id) -> Backup:
    """One backup of this agent; 404 for an unknown id or another agent's backup."""
    key = uuid_or_none(backup_id)
    backup = Backup.objects.select_related("agent").filter(pk=key, agent=agent).first() if key else None
    if backup is None:
        raise BackupNotFound()
    return backup


def backup_policy_get(*, agent: Agent) -> BackupPolicy:
    policy = BackupPolicy.objects.filter(agent=agent).first()
    if policy is None:
        raise BackupPolicyNotFound()
    return policy
