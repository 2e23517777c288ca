"""What backups keep: each agent's policy (schedule, retention, destination) and its backups."""

from __future__ import annotations

import uuid

from django.core.validators import MinValueValidator
from django.db import models

from fleet.crypto import EncryptedTextField


class BackupPolicy(models.Model):
    """When an agent is backed up (a 5-field cron schedule, UTC), how many completed backups are
    kept, and where they go: the operator's BACKUP_STORAGE_URL unless `destination_url` names an
    S3-compatible endpoint of the policy's own (its credentials encrypted at rest)."""

    agent = models.OneToOneField("agents.Agent", on_delete=models.CASCADE, primary_key=True,
                                 related_name="backup_policy")
    schedule = models.CharField(max_length=100)
    keep = models.PositiveIntegerField(validators=[MinValueValidator(1)])
    destination_url = models.CharField(max_length=2048, blank=True, default="")  # https://host:port/bucket/prefix
    destination_region = models.CharField(max_length=64, blank=True, default="")
    destination_access_key_id = EncryptedTextField(null=True, blank=True)
    destination_secret_access_key = EncryptedTextField(null=True, blank=True)
    next_run_at = models.DateTimeField(db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "backup policies"

    def __str__(self) -> str:
        return f"Backup policy of agent {self.agent_id}"


class BackupStatus(models.TextChoices):
    RUNNING = "running"
    COMPLETED = "completed"  # only once the object is whole at its destination
    FAILED = "failed"


class BackupTrigger(models.TextChoices):
    SCHEDULE = "schedule"
    MANUAL = "manual"


class Backup(models.Model):
    """One backup of an agent: its bundle (agents.files.export) stored as `object_key` at the
    destination recorded in `storage` (the resolved storage URL with its credentials, encrypted;
    empty for the operator's BACKUP_STORAGE_URL), so a later change of the policy's destination
    still finds, restores and prunes the copies made before it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="backups")
    status = models.CharField(max_length=16, choices=BackupStatus.choices, default=BackupStatus.RUNNING)
    trigger = models.CharField(max_length=16, choices=BackupTrigger.choices)
    size = models.BigIntegerField(null=True, blank=True)  # bytes of the stored bundle
    object_key = models.CharField(max_length=1024)
    storage = EncryptedTextField(null=True, blank=True)
    error = models.TextField(blank=True, default="")  # scrubbed of secrets
    created_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["agent", "-created_at"], name="backups_agent_newest")]

    def __str__(self) -> str:
        return f"Backup {self.pk} of agent {self.agent_id} ({self.status})"
