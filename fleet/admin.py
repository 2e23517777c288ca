"""Admin for the kernel: the event log, read-only (events are facts, not settings)."""

from django.contrib import admin

from .admin_base import ReadOnlyModelAdmin
from .models import Event


@admin.register(Event)
class EventAdmin(ReadOnlyModelAdmin):
    list_display = ("occurred_at", "kind", "message", "agent_id", "workspace_ids", "test", "fanned_out_at")
    list_filter = ("kind", "test", "occurred_at")
    search_fields = ("kind", "message")
    date_hierarchy = "occurred_at"
    ordering = ("-occurred_at",)
    list_per_page = 100
    show_full_result_count = False  # the log grows large; skip the second COUNT(*)
