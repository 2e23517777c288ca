"""Operators see integrations without their credentials: the encrypted blob is not a field of
any admin form, and the OAuth states are not in the admin at all."""

from django.contrib import admin

from fleet.admin_base import ModelAdmin

from .models import Integration


@admin.register(Integration)
class IntegrationAdmin(ModelAdmin):
    list_display = ("provider", "agent", "status", "mcp_enabled", "last_tested_at", "created_at")
    list_filter = ("status", "provider", "mcp_enabled")
    search_fields = ("provider", "agent__name")
    fields = ("agent", "provider", "status", "config", "mcp_enabled", "token_expires_at", "last_error",
              "last_tested_at", "last_test_result", "created_by", "created_at", "updated_at")
    readonly_fields = ("agent", "provider", "config", "token_expires_at", "last_tested_at", "last_test_result",
                       "created_by", "created_at", "updated_at")
