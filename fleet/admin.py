"""Admin for the kernel: the event log, read-only (events are facts, not settings)."""

from django.contrib import admin

from .models import Event


@admin.register(Event)
class EventAdmin(admin.ModelAdmin):
    list_display = ("occurred_at", "kind", "message", "agent_id", "workspace_ids", "test")
    list_filter = ("kind", "test", "occurred_at")
    search_fields = ("kind", "message")
    date_hierarchy = "occurred_at"
    ordering = ("-occurred_at",)
    list_per_page = 100
    show_full_result_count = False  # the log grows large; skip the second COUNT(*)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
