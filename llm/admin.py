"""Operators manage provider keys in the console as the API does, through llm.services: the key
is write-only (a password field that is never filled back; empty keeps the stored key), a
change reaches the agents using it, and a key in use is not deleted (key_in_use)."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from unfold.widgets import UnfoldAdminPasswordWidget, UnfoldAdminSelectWidget, UnfoldAdminTextInputWidget

from accounts.models import User
from fleet.admin_base import TabularInline, inline_add
from fleet.admin_forms import ServiceForm, ServiceFormAdmin
from fleet.errors import ValidationFailed
from workspaces.models import Workspace

from . import providers, services
from .models import ProviderKey


class ProviderKeyForm(ServiceForm):
    """Stored by the key services themselves, with their refusals on the fields."""

    api_field_names = {"apiKey": "api_key", "baseUrl": "base_url"}
    fixed_on_change = ("provider", "user", "workspace")  # a key keeps its provider and owner
    api_key = forms.CharField(required=False, strip=True, label="API key",
                              widget=UnfoldAdminPasswordWidget(render_value=False),
                              help_text="Write-only: never shown again. Empty on a change keeps the stored key.")

    class Meta:
        model = ProviderKey
        fields = ("provider", "label", "api_key", "base_url", "user", "workspace")
        widgets = {"provider": UnfoldAdminSelectWidget(choices=[(p, p) for p in providers.IDS]),
                   "label": UnfoldAdminTextInputWidget, "base_url": UnfoldAdminTextInputWidget}

    def apply(self, data, api):
        if not self.adding:
            return services.key_update(key=self.instance, label=data["label"], api_key=data.get("api_key") or None,
                                       base_url=data.get("base_url"), base_url_given=True)
        if bool(data.get("user")) == bool(data.get("workspace")):
            raise ValidationFailed({"user": "A key belongs to one user or one workspace: choose one."})
        return services.key_create(
            provider=data["provider"], label=data["label"], api_key=data.get("api_key") or "",
            base_url=data.get("base_url"), created_by=self.acting_user, user=data.get("user"),
            workspace=data.get("workspace"))


@admin.register(ProviderKey)
class ProviderKeyAdmin(ServiceFormAdmin):
    form = ProviderKeyForm
    list_display = ("label", "provider", "user", "workspace", "last_tested_at", "created_at")
    list_filter = ("provider",)
    search_fields = ("label", "provider", "user__email", "workspace__name")
    raw_id_fields = ("user", "workspace")
    readonly_fields = ("last_tested_at", "last_test_result", "created_by", "created_at", "updated_at")

    def remove(self, key):
        services.key_delete(key=key)


class ProviderKeyInline(TabularInline):
    """The keys of a user or a workspace on its page (never the key): add and change them on
    the key's own page, where the services check them."""

    model = ProviderKey
    extra = 0
    fields = ("label", "provider", "base_url", "last_tested_at", "created_at")
    readonly_fields = fields
    can_delete = False
    show_change_link = True
    verbose_name, verbose_name_plural = "model provider key", "model provider keys"

    def has_add_permission(self, request, obj=None):
        return False


class UserProviderKeyInline(ProviderKeyInline):
    fk_name = "user"


inline_add(User, UserProviderKeyInline)
inline_add(Workspace, ProviderKeyInline)
