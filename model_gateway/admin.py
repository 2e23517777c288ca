"""Admin: each agent's limits at the model gateway, set as PUT /agents/:id/model-gateway sets
them (its checks, limits_set: every bad field named together)."""

from __future__ import annotations

from django.contrib import admin

from fleet.admin_forms import ServiceForm, ServiceFormAdmin, api_json_field

from .models import GatewayLimits
from .services import limits_set


class GatewayLimitsForm(ServiceForm):
    allowed_models = api_json_field('The only models the agent may call, as a list (["gpt-4o-mini"]); '
                                    "empty: any model of its key.")
    api_field_names = {"requestsPerMinute": "requests_per_minute", "tokensPerMinute": "tokens_per_minute",
                       "allowedModels": "allowed_models"}
    fixed_on_change = ("agent",)

    class Meta:
        model = GatewayLimits
        fields = ("agent", "requests_per_minute", "tokens_per_minute", "allowed_models")

    def apply(self, data, api):
        return limits_set(agent=data["agent"], body={
            "requestsPerMinute": data.get("requests_per_minute"), "tokensPerMinute": data.get("tokens_per_minute"),
            "allowedModels": data.get("allowed_models") or [],
        })


@admin.register(GatewayLimits)
class GatewayLimitsAdmin(ServiceFormAdmin):
    form = GatewayLimitsForm
    list_display = ("agent", "requests_per_minute", "tokens_per_minute", "allowed_models", "updated_at")
    search_fields = ("agent__name", "agent__id")
    list_select_related = ("agent",)
    raw_id_fields = ("agent",)
    readonly_fields = ("updated_at",)
