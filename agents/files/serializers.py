"""Output shapes of the files, export and migration routes."""

from __future__ import annotations

from rest_framework import serializers

from fleet.api.serializers import TimestampField


class FileEntryOut(serializers.Serializer):
    """One item of a state folder (reads an agents.backends.base.FileEntry)."""

    name = serializers.CharField()
    path = serializers.CharField(help_text="relative to the state folder")
    type = serializers.CharField(help_text="file, dir or link")
    size = serializers.IntegerField()
    modifiedAt = TimestampField(source="modified_at", allow_null=True)  # noqa: N815 - the spec's names


class MigrationDraftOut(serializers.Serializer):
    """A migration draft (reads an agents.files.drafts.MigrationDraft)."""

    id = serializers.CharField()
    manifest = serializers.DictField()
    expiresAt = TimestampField(source="expires_at")  # noqa: N815
