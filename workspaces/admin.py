"""Admin console: workspaces with their members, and API keys by prefix with a revoke action.

The key digest is never displayed, and keys are not created here: a secret is shown
once, to the session that issues it through the API.
"""

from __future__ import annotations

from django.contrib import admin, messages

from fleet.admin_base import ModelAdmin, TabularInline

from . import services
from .models import ApiKey, Membership, Workspace


class MembershipInline(TabularInline):
    model = Membership
    extra = 0
    fields = ("user", "role", "created_at")
    readonly_fields = ("created_at",)
    raw_id_fields = ("user",)


class ApiKeyInline(TabularInline):
    model = ApiKey
    extra = 0
    fields = ("name", "prefix", "scopes", "created_by", "created_at", "last_used_at", "revoked_at")
    readonly_fields = fields
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Workspace)
class WorkspaceAdmin(ModelAdmin):
    list_display = ("name", "owner", "created_at")
    search_fields = ("name", "owner__email")
    raw_id_fields = ("owner",)
    readonly_fields = ("id", "created_at")
    inlines = (MembershipInline, ApiKeyInline)


@admin.register(ApiKey)
class ApiKeyAdmin(ModelAdmin):
    list_display = ("prefix", "name", "workspace", "scopes", "created_by", "last_used_at", "revoked_at")
    list_filter = (("revoked_at", admin.EmptyFieldListFilter),)
    search_fields = ("prefix", "name", "workspace__name", "created_by__email")
    fields = ("id", "name", "prefix", "scopes", "workspace", "created_by", "created_at", "last_used_at", "revoked_at")
    readonly_fields = fields
    actions = ("revoke",)

    def has_add_permission(self, request):
        return False

    @admin.action(description="Revoke the selected API keys")
    def revoke(self, request, queryset):
        keys = list(queryset.filter(revoked_at__isnull=True))
        for key in keys:
            services.api_key_revoke(api_key=key)
        self.message_user(request, f"Revoked {len(keys)} API key(s).", messages.SUCCESS)
