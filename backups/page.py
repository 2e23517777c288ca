"""The agent page's backups card: the policy, the latest backups, a button to take one now and,
on each completed one, a restore button that asks first (backups/console.py)."""

from __future__ import annotations

from django.urls import reverse

from agents.models import Agent

from .models import BackupPolicy, BackupStatus
from .selectors import backup_list

TEMPLATE = "admin/backups/agent_backups.html"
SHOWN = 10


def backups_card(agent: Agent) -> dict:
    backups = list(backup_list(agent=agent)[:SHOWN])
    return {
        "policy": BackupPolicy.objects.filter(agent=agent).first(),
        "backups": [{"backup": backup, "restorable": backup.status == BackupStatus.COMPLETED,
                     "restore_url": reverse("admin:backups_backup_restore", args=[agent.pk, backup.pk])}
                    for backup in backups],
        "take_url": reverse("admin:backups_backup_take", args=[agent.pk]),
    }
