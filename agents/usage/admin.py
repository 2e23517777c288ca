"""Admin: usage rows and their daily rollups (read-only), and operator rate overrides."""

from __future__ import annotations

from django.contrib import admin

from fleet.admin_base import ModelAdmin, ReadOnlyModelAdmin

from ..models import ModelRate, UsageDaily, UsageEvent
from ..models.money import micros_to_usd


# Usage is written by ingestion only: editing a row here would desynchronise the rollups.
@admin.register(UsageEvent)
class UsageEventAdmin(ReadOnlyModelAdmin):
    list_display = ("occurred_at", "agent", "model", "provider", "input_tokens", "output_tokens", "cost_usd",
                    "rate_source")
    list_filter = ("rate_source", "provider")
    search_fields = ("request_id", "model", "agent__name")
    raw_id_fields = ("agent",)
    date_hierarchy = "occurred_at"
    show_full_result_count = False  # no COUNT(*) over millions of rows on every page

    @admin.display(description="cost (USD)")
    def cost_usd(self, obj):
        return micros_to_usd(obj.cost_micros)


@admin.register(UsageDaily)
class UsageDailyAdmin(ReadOnlyModelAdmin):
    list_display = ("day", "agent", "model", "provider", "rate_source", "input_tokens", "output_tokens", "events")
    list_filter = ("rate_source",)
    search_fields = ("model", "agent__name")
    raw_id_fields = ("agent",)
    show_full_result_count = False


@admin.register(ModelRate)
class ModelRateAdmin(ModelAdmin):
    """Operator prices: they beat the built-in table for events on or after `effective_from`.
    New events are priced with them; stored events keep the cost they were recorded with."""

    list_display = ("model", "provider", "input_usd_per_mtok", "output_usd_per_mtok", "effective_from", "note")
    search_fields = ("model", "provider")
    list_filter = ("provider",)
