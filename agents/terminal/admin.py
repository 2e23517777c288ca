"""Admin: every terminal opened on an agent, read-only (who, which agent, from where, when, how
long, how it ended; never what was typed or shown)."""

from __future__ import annotations

from django.contrib import admin

from fleet.admin_base import ReadOnlyModelAdmin

from ..models import TerminalSession


@admin.register(TerminalSession)
class TerminalSessionAdmin(ReadOnlyModelAdmin):
    list_display = ("started_at", "agent_name", "user_email", "via", "client_ip", "duration", "ended")
    list_filter = ("end_reason", "via")
    search_fields = ("agent_name", "user_email", "client_ip")
    raw_id_fields = ("agent", "user")
    date_hierarchy = "started_at"
    show_full_result_count = False

    @admin.display(description="how it ended")
    def ended(self, obj: TerminalSession) -> str:
        return obj.get_end_reason_display() if obj.ended_at else "open"

    @admin.display(description="duration")
    def duration(self, obj: TerminalSession) -> str:
        if obj.ended_at is None:
            return "-"
        seconds = int((obj.ended_at - obj.started_at).total_seconds())
        return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
