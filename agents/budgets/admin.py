"""Admin: budgets per agent and period."""

from __future__ import annotations

from django.contrib import admin

from fleet.admin_base import ModelAdmin

from ..models import Budget


@admin.register(Budget)
class BudgetAdmin(ModelAdmin):
    list_display = ("agent", "period", "limit_usd", "soft_threshold_pct", "soft_notified_for", "updated_at")
    list_filter = ("period",)
    search_fields = ("agent__name", "agent__id")
    raw_id_fields = ("agent",)
    readonly_fields = ("soft_notified_for", "created_at", "updated_at")
