"""Admin: budgets per agent and period, in dollars, set as the budget route sets them (its checks,
budget_upsert: a cap already reached is acted on at once)."""

from __future__ import annotations

from django import forms
from django.contrib import admin

from fleet.admin_forms import ServiceForm, ServiceFormAdmin

from ..models import Budget
from ..models.budget import DEFAULT_SOFT_THRESHOLD_PCT
from .serializers import BudgetInput
from .services import budget_delete, budget_upsert


class BudgetForm(ServiceForm):
    api_input = BudgetInput
    limit_usd = forms.DecimalField(label="Limit (USD)", min_value=0, decimal_places=6, max_digits=16,
                                   help_text="The hard cap for the period: the agent is paused when it is reached.")
    fixed_on_change = ("agent", "period")  # one budget per agent and period: another is another row

    class Meta:
        model = Budget
        fields = ("agent", "period", "limit_usd", "soft_threshold_pct")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.adding:
            self.initial["limit_usd"] = self.instance.limit_usd

    def api_data(self, data: dict) -> dict:
        return {"period": data.get("period"), "limit_usd": str(data["limit_usd"]),
                "soft_threshold_pct": str(data.get("soft_threshold_pct") or DEFAULT_SOFT_THRESHOLD_PCT)}

    def apply(self, data, api):
        budget, _ = budget_upsert(agent=data["agent"], period=api.validated_data["period"],
                                  limit_usd=api.validated_data["limit_usd"],
                                  soft_threshold_pct=api.validated_data["soft_threshold_pct"])
        return budget


@admin.register(Budget)
class BudgetAdmin(ServiceFormAdmin):
    form = BudgetForm
    list_display = ("agent", "period", "limit_usd", "soft_threshold_pct", "soft_notified_for", "updated_at")
    list_filter = ("period",)
    search_fields = ("agent__name", "agent__id")
    list_select_related = ("agent",)
    raw_id_fields = ("agent",)
    readonly_fields = ("soft_notified_for", "created_at", "updated_at")

    def remove(self, budget):
        budget_delete(budget=budget)
