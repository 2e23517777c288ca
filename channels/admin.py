"""Admin console: channels and their messages, read-only. Secrets never appear here (only whether
one is set); config is edited through the API, which validates it against the type definition."""

from __future__ import annotations

from django.contrib import admin

from fleet.admin_base import ModelAdmin

from .models import ChannelMessage, LegacyChannel, RuntimeChannel


class ReadOnlyAdmin(ModelAdmin):
    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(RuntimeChannel)
class RuntimeChannelAdmin(ReadOnlyAdmin):
    list_display = ("agent", "type", "enabled", "applied_at", "updated_at")
    list_filter = ("type", "enabled")
    search_fields = ("agent__name", "type")
    fields = ("agent", "type", "enabled", "config", "has_secrets", "applied_at", "created_at", "updated_at")
    readonly_fields = fields
    list_select_related = ("agent",)

    @admin.display(boolean=True, description="secrets set")
    def has_secrets(self, channel) -> bool:
        return bool(channel.secrets)


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
