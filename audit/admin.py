"""The console's audit page: read-only, filtered as the API filters (actor, action, target,
time, result)."""

from django.contrib import admin

from fleet.admin_base import ReadOnlyModelAdmin

from .models import AuditEntry


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyModelAdmin):
    list_display = ("at", "actor_label", "actor_ip", "source", "action", "target_type", "target_id",
                    "workspace_id", "result")
    list_filter = ("source", "result", "target_type", ("at", admin.DateFieldListFilter))
    search_fields = ("actor_label", "=action", "=target_id", "=workspace_id")
    date_hierarchy = "at"
    list_select_related = False
    show_full_result_count = False  # a count of a large log costs a scan
    fields = list_display + ("actor_user", "actor_key_id", "detail")
    readonly_fields = fields
