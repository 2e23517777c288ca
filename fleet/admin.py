"""Admin for the kernel: the event log, read-only (events are facts, not settings), each with
who caused it and the agent it is about by name (as the event recorded it)."""

from django.contrib import admin

from .admin_base import ReadOnlyModelAdmin
from .events import recorded_agent
from .models import Event


@admin.register(Event)
class EventAdmin(ReadOnlyModelAdmin):
    list_display = ("occurred_at", "kind", "message", "agent", "actor", "test", "fanned_out_at")
    list_filter = ("kind", "test", "occurred_at")
    search_fields = ("kind", "message", "actor")
    date_hierarchy = "occurred_at"
    ordering = ("-occurred_at",)
    list_per_page = 100
    show_full_result_count = False  # the log grows large; skip the second COUNT(*)

    @admin.display(description="agent")
    def agent(self, event: Event) -> str:
        return recorded_agent(event).get("name") or (str(event.agent_id) if event.agent_id else "")
