"""Admin console: workspaces with their members, and API keys by prefix with a revoke action.

A key is issued here as the route issues it (its checks, api_key_create: only a member may); the
key itself is shown once, on the page that answers the form, and never again. The digest is
never displayed.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.template.response import TemplateResponse
from django.utils.cache import add_never_cache_headers

from fleet.admin_base import ModelAdmin, TabularInline
from fleet.admin_forms import ServiceForm, ServiceFormAdmin

from . import services
from .models import ApiKey, Membership, Workspace
from .roles import Scope
from .serializers import ApiKeyInput


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


class ApiKeyForm(ServiceForm):
    api_input = ApiKeyInput
    scopes = forms.MultipleChoiceField(choices=[(scope, scope) for scope in Scope.ALL],
                                       widget=forms.CheckboxSelectMultiple)

    class Meta:
        model = ApiKey
        fields = ("workspace", "name", "scopes")

    def apply(self, data, api):
        key, raw = services.api_key_create(workspace=data["workspace"], created_by=self.acting_user,
                                           **api.validated_data)
        key.shown_once = raw  # for the page that answers this form, never stored
        return key


@admin.register(ApiKey)
class ApiKeyAdmin(ServiceFormAdmin):
    form = ApiKeyForm
    list_display = ("prefix", "name", "workspace", "scopes", "created_by", "last_used_at", "revoked_at")
    list_filter = (("revoked_at", admin.EmptyFieldListFilter),)
    search_fields = ("prefix", "name", "workspace__name", "created_by__email")
    shown = ("id", "name", "prefix", "scopes", "workspace", "created_by", "created_at", "last_used_at", "revoked_at")
    actions = ("revoke",)

    def get_fields(self, request, obj=None):
        return self.shown if obj else ApiKeyForm.Meta.fields

    def get_readonly_fields(self, request, obj=None):
        return self.shown if obj else ()

    def response_add(self, request, obj, post_url_continue=None):
        """The key, this once: the page answering the form is the only place it ever appears."""
        context = {**self.admin_site.each_context(request), "opts": self.opts, "key": obj,
                   "raw_key": obj.shown_once, "title": f"API key {obj.prefix}… issued"}
        response = TemplateResponse(request, "admin/workspaces/apikey/issued.html", context)
        add_never_cache_headers(response)
        return response

    @admin.action(description="Revoke the selected API keys")
    def revoke(self, request, queryset):
        keys = list(queryset.filter(revoked_at__isnull=True))
        for key in keys:
            services.api_key_revoke(api_key=key)
        self.message_user(request, f"Revoked {len(keys)} API key(s).", messages.SUCCESS)
