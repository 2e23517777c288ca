"""Admin: backup policies and backups, read only (the API and the agent page's card change
them through the services). Credentials and recorded destinations are never shown."""

from __future__ import annotations

from django.contrib import admin
from django.urls import path

from fleet.admin_base import ReadOnlyModelAdmin

from .console import backup_restore_view, backup_take_view
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

    def get_urls(self):
        def wrap(view):
            return self.admin_site.admin_view(lambda request, *args, **kwargs: view(self, request, *args, **kwargs))

        return [
            path("agent/<uuid:agent_id>/take/", wrap(backup_take_view), name="backups_backup_take"),
            path("agent/<uuid:agent_id>/<uuid:backup_id>/restore/", wrap(backup_restore_view),
                 name="backups_backup_restore"),
            *super().get_urls(),
        ]
