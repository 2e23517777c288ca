"""Operators see provider keys without the key: the encrypted field is not in any admin form."""

from django.contrib import admin

from fleet.admin_base import ModelAdmin

from .models import ProviderKey


@admin.register(ProviderKey)
class ProviderKeyAdmin(ModelAdmin):
    list_display = ("label", "provider", "user", "workspace", "last_tested_at", "created_at")
    list_filter = ("provider",)
    search_fields = ("label", "provider", "user__email", "workspace__name")
    fields = ("provider", "label", "base_url", "user", "workspace", "last_tested_at", "last_test_result",
              "created_by", "created_at", "updated_at")
    readonly_fields = fields
