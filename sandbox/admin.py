"""Admin console: sandbox policies and approval requests, read only (the API validates policies
and decisions go to the runtime through it)."""

from __future__ import annotations

from django.contrib import admin

from fleet.admin_base import ReadOnlyModelAdmin

from .models import SandboxApproval, SandboxPolicy


@admin.register(SandboxPolicy)
class SandboxPolicyAdmin(ReadOnlyModelAdmin):
    list_display = ("agent", "version", "applied_at", "created_by", "created_at")
    search_fields = ("agent__name",)
    list_select_related = ("agent", "created_by")


@admin.register(SandboxApproval)
class SandboxApprovalAdmin(ReadOnlyModelAdmin):
    list_display = ("request_id", "agent", "status", "command", "created_at", "expires_at", "decided_by")
    list_filter = ("status", "kind")
    search_fields = ("request_id", "agent__name", "command")
    list_select_related = ("agent", "decided_by")
