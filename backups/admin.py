"""Admin: backup policies and backups, read only (the API and the agent page's card change
them through the services). Credentials and recorded destinations are never shown."""

from __future__ import annotations

from django.contrib import admin

from fleet.admin_base import ReadOnlyModelAdmin

from .models import Backup, BackupPolicy


@admin.register(BackupPolicy)
class BackupPolicyAdmin(ReadOnlyModelAdmin):
    list_display = ("agent", "schedule", "keep", "destination_url", "next_run_at", "updated_at")
    search_fields = ("agent__name", "agent__id")
    list_select_related = ("agent",)
    fields = ("agent", "schedule", "keep", "destination_url", "destination_region", "next_run_at", "created_at",
              "updated_at")


@admin.register(Backup)
class BackupAdmin(ReadOnlyModelAdmin):
    list_display = ("id", "agent", "status", "trigger", "size", "created_at", "completed_at")
    list_filter = ("status", "trigger")
    search_fields = ("agent__name", "agent__id", "id")
    list_select_related = ("agent",)
    fields = ("id", "agent", "status", "trigger", "size", "object_key", "error", "created_at", "completed_at")
