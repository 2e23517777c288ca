"""Operators connect and change integrations as the integration routes do (integrations.services:
the provider's config checked, credentials encrypted): the config is the API's object, with every
credential read back as "[REDACTED]", which keeps it when sent back. The encrypted blob is never a
field of a form, and the OAuth states are not in the admin at all."""

from django import forms
from django.contrib import admin

from fleet.admin_forms import ServiceForm, ServiceFormAdmin, api_json_field

from .models import Integration
from .selectors import integration_record
from .services import integration_connect, integration_remove, integration_update

CONFIG_HELP = ('The provider\'s config as the API takes it, e.g. {"token": "..."}. Credentials read back as '
               '"[REDACTED]": leave that to keep them. OAuth providers connect through the API.')


class IntegrationForm(ServiceForm):
    provider = forms.CharField(max_length=64, help_text="The catalog's provider id (GET /api/integrations/catalog).")
    config = api_json_field(CONFIG_HELP)
    fixed_on_change = ("agent", "provider")  # another agent or provider is another connection

    class Meta:
        model = Integration
        fields = ("agent", "provider", "config", "mcp_enabled")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.adding:
            self.initial["config"] = integration_record(self.instance).config

    def apply(self, data, api):
        config = data.get("config") or {}
        if self.adding:
            return integration_connect(agent=data["agent"], provider=data["provider"], config=config,
                                       user=self.acting_user, mcp_enabled=data["mcp_enabled"])
        return integration_update(integration=self.instance, config=config, mcp_enabled=data["mcp_enabled"])


@admin.register(Integration)
class IntegrationAdmin(ServiceFormAdmin):
    form = IntegrationForm
    list_display = ("provider", "agent", "status", "mcp_enabled", "last_tested_at", "created_at")
    list_filter = ("status", "provider", "mcp_enabled")
    search_fields = ("provider", "agent__name")
    list_select_related = ("agent",)
    raw_id_fields = ("agent",)
    readonly_fields = ("status", "token_expires_at", "last_error", "last_tested_at", "last_test_result",
                       "created_by", "created_at", "updated_at")

    def remove(self, integration):
        integration_remove(integration=integration)
