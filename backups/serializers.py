"""Shapes of the backup routes: input checked here for types and sizes, meaning in services."""

from __future__ import annotations

from rest_framework import serializers

from fleet.api.serializers import TimestampField
from fleet.redaction import shown

from .models import BackupStatus, BackupTrigger

KEEPS_STORED = '"[REDACTED]" keeps the stored one (same url only)'


class BackupDestinationIn(serializers.Serializer):
    url = serializers.CharField(max_length=2048, help_text="the S3-compatible endpoint and bucket: "
                                "https://host:port/bucket[/prefix]; checked by the outbound policy")
    accessKeyId = serializers.CharField(max_length=256, trim_whitespace=False, help_text=KEEPS_STORED)  # noqa: N815
    secretAccessKey = serializers.CharField(max_length=256, trim_whitespace=False, help_text=KEEPS_STORED)  # noqa: N815
    region = serializers.CharField(max_length=64, required=False, allow_blank=True, default="")


class BackupPolicyIn(serializers.Serializer):
    schedule = serializers.CharField(max_length=100, help_text="5-field cron (minute hour day month weekday), UTC")
    keep = serializers.IntegerField(min_value=1, max_value=1000, help_text="completed backups kept")
    destination = BackupDestinationIn(required=False, allow_null=True, default=None,
                                help_text="absent or null: the server's BACKUP_STORAGE_URL")


class BackupDestinationOut(serializers.Serializer):
    url = serializers.CharField(source="destination_url")
    accessKeyId = serializers.SerializerMethodField()  # noqa: N815
    secretAccessKey = serializers.SerializerMethodField()  # noqa: N815
    region = serializers.CharField(source="destination_region")

    def get_accessKeyId(self, policy) -> str:  # noqa: N802
        return shown(policy.destination_access_key_id)

    def get_secretAccessKey(self, policy) -> str:  # noqa: N802
        return shown(policy.destination_secret_access_key)


class BackupPolicyOut(serializers.Serializer):
    schedule = serializers.CharField()
    keep = serializers.IntegerField()
    destination = serializers.SerializerMethodField()
    nextRunAt = TimestampField(source="next_run_at")  # noqa: N815
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815

    def get_destination(self, policy) -> dict | None:
        return BackupDestinationOut(policy).data if policy.destination_url else None


class BackupOut(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=BackupStatus.choices)
    trigger = serializers.ChoiceField(choices=BackupTrigger.choices)
    size = serializers.IntegerField(allow_null=True, help_text="bytes of the stored bundle, once completed")
    createdAt = TimestampField(source="created_at")  # noqa: N815
    completedAt = TimestampField(source="completed_at", allow_null=True)  # noqa: N815
    error = serializers.CharField(help_text="why the latest attempt failed; empty otherwise")


class BackupRestoreIn(serializers.Serializer):
    into = serializers.ChoiceField(choices=["same", "new"], help_text="same: this agent, stopped and "
                                   "redeployed on the backup; new: a migration draft for POST /agents/deploy")


class RestoredIntoAgentOut(serializers.Serializer):
    agentId = serializers.UUIDField(source="pk")  # noqa: N815
    status = serializers.CharField(help_text="The agent's status now: the job stops and redeploys it once the "
                                             "backup's bundle is fetched and checked")


class RestoredAsDraftOut(serializers.Serializer):
    migrationDraftId = serializers.CharField(source="id")  # noqa: N815
    manifest = serializers.DictField()
    expiresAt = TimestampField(source="expires_at")  # noqa: N815
