"""Admin console: an OpenClaw agent's channels saved as the channel routes save them (checked
against the type's definition, secrets encrypted, pushed into a running runtime), with every
secret read back as "[REDACTED]", which keeps it when sent back; legacy channels and messages
read-only."""

from __future__ import annotations

from django import forms
from django.contrib import admin

from fleet.admin_base import ModelAdmin
from fleet.admin_forms import ServiceForm, ServiceFormAdmin, api_json_field

from .config import redacted
from .models import ChannelMessage, LegacyChannel, RuntimeChannel
from .services import runtime_channel_save

CONFIG_HELP = ('The channel\'s config as the API takes it, e.g. {"botToken": "...", "dmPolicy": "pairing"}. '
               'Secrets read back as "[REDACTED]": leave that to keep them. Saved into the runtime when it runs.')


class ReadOnlyAdmin(ModelAdmin):
    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class RuntimeChannelForm(ServiceForm):
    type = forms.CharField(max_length=40, help_text="The channel type: telegram, slack, whatsapp, ...")
    config = api_json_field(CONFIG_HELP)
    fixed_on_change = ("agent", "type")  # another agent or type is another channel

    class Meta:
        model = RuntimeChannel
        fields = ("agent", "type", "enabled", "config")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if not self.adding:
            self.initial["config"] = redacted(self.instance.config or {}, self.instance.secret_values)

    def apply(self, data, api):
        return runtime_channel_save(agent=data["agent"], type_=data["type"], config=data.get("config") or {},
                                    enabled=data["enabled"]).channel


@admin.register(RuntimeChannel)
class RuntimeChannelAdmin(ServiceFormAdmin):
    form = RuntimeChannelForm
    list_display = ("agent", "type", "enabled", "applied_at", "updated_at")
    list_filter = ("type", "enabled")
    search_fields = ("agent__name", "type")
    list_select_related = ("agent",)
    raw_id_fields = ("agent",)
    readonly_fields = ("applied_at", "created_at", "updated_at")

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # as in the API: a channel is switched off (enabled) or logged out, not deleted


@admin.register(LegacyChannel)
class LegacyChannelAdmin(ReadOnlyAdmin):
    list_display = ("name", "agent", "type", "enabled", "created_at")
    list_filter = ("type", "enabled")
    search_fields = ("name", "agent__name")
    fields = ("id", "agent", "type", "name", "enabled", "config", "has_secrets", "created_at", "updated_at")
    readonly_fields = fields
    list_select_related = ("agent",)

    @admin.display(boolean=True, description="secrets set")
    def has_secrets(self, channel) -> bool:
        return bool(channel.secrets)


@admin.register(ChannelMessage)
class ChannelMessageAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "channel", "direction", "state", "attempts")
    list_filter = ("direction", "state")
    search_fields = ("channel__name", "provider_update_id")
    fields = ("id", "channel", "direction", "state", "content", "metadata", "sender", "provider_update_id",
              "reply_to", "attempts", "error", "created_at")
    readonly_fields = fields
    list_select_related = ("channel",)
