"""Admin console: Remote Docker hosts with their status and a "test connection" action, and the
grants of platform targets. Hosts are registered through the API (/api/remote-hosts,
/api/admin/remote-hosts), which validates addresses and keys and encrypts the secrets; the
console shows them without any secret and runs the same services (test, delete)."""

from __future__ import annotations

from django.contrib import admin, messages

from fleet.admin_base import ModelAdmin
from fleet.errors import FleetError

from .models import RemoteHost, TargetGrant
from .remote_hosts import remote_host_delete, remote_host_test

SECRET_FIELDS = ("private_key", "passphrase", "password")


@admin.register(RemoteHost)
class RemoteHostAdmin(ModelAdmin):
    list_display = ("name", "scope", "host", "port", "username", "auth_type", "status", "host_key_fingerprint",
                    "docker_version", "last_tested_at")
    list_filter = ("status", "auth_type")
    search_fields = ("name", "host", "owner__email", "id")
    list_select_related = ("owner",)
    exclude = SECRET_FIELDS  # never rendered, not even masked
    readonly_fields = ("id", "execution_target_id", "owner", "host", "port", "username", "auth_type", "docker_socket",
                       "status", "host_key_fingerprint", "docker_version", "last_error", "last_tested_at",
                       "created_at", "updated_at")
    actions = ("test_connection",)

    def has_add_permission(self, request):
        return False  # registered through the API, which validates the address and the key

    @admin.display(description="Owner")
    def scope(self, host: RemoteHost) -> str:
        return host.owner.email if host.owner_id else "platform"

    @admin.action(description="Test the connection (pins the host key at the first success)")
    def test_connection(self, request, queryset):
        for host in queryset:
            result = remote_host_test(host=host)
            if result.ok:
                self.message_user(request, f"{host.name}: ready, Docker {result.docker_version}, host key "
                                           f"{result.host_key_fingerprint}.", messages.SUCCESS)
            else:
                self.message_user(request, f"{host.name}: {result.error}", messages.ERROR)

    def delete_model(self, request, obj):
        try:
            remote_host_delete(host=obj)
        except FleetError as exc:
            self.message_user(request, f"{obj.name}: {exc.message}", messages.ERROR)

    def delete_queryset(self, request, queryset):
        for host in queryset:
            self.delete_model(request, host)


@admin.register(TargetGrant)
class TargetGrantAdmin(ModelAdmin):
    list_display = ("execution_target_id", "kind", "user", "group", "workspace", "created_at")
    list_filter = ("kind",)
    search_fields = ("execution_target_id", "user__email", "group__name", "workspace__name")
    list_select_related = ("user", "group", "workspace")
    raw_id_fields = ("user", "group", "workspace")
    fields = ("execution_target_id", "kind", "user", "group", "workspace", "created_by", "created_at")
    readonly_fields = ("created_by", "created_at")

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)
