"""Admin console: Remote Docker hosts with their status and a "test connection" action, and the
grants of platform targets. A host is registered and changed here as the platform-host routes do
it (/api/admin/remote-hosts: their input, limits and services, which check the address and the
key and encrypt the secrets); its secrets are write-only (an empty field keeps the stored one) and
never rendered, not even masked."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from unfold.widgets import UnfoldAdminPasswordWidget, UnfoldAdminTextareaWidget

from fleet.admin_base import ModelAdmin
from fleet.admin_forms import ServiceForm, ServiceFormAdmin

from . import host_limits
from .models import RemoteHost, TargetGrant
from .remote_hosts import remote_host_create, remote_host_delete, remote_host_test, remote_host_update
from .serializers import RemoteHostIn

WRITE_ONLY = "Write-only: never shown. Empty keeps the stored one."
# The form's secret fields -> the API's auth object; none is a model field, so none is filled in.
SECRET_INPUTS = {"ssh_private_key": "privateKey", "ssh_passphrase": "passphrase", "ssh_password": "password"}


class RemoteHostForm(ServiceForm):
    api_input = RemoteHostIn
    api_field_names = {"dockerSocket": "docker_socket", "auth": "auth_type",
                       **{f"auth.{api}": form for form, api in SECRET_INPUTS.items()}}
    ssh_private_key = forms.CharField(required=False, strip=False, label="Private key", help_text=WRITE_ONLY,
                                      widget=UnfoldAdminTextareaWidget(attrs={"rows": 4, "autocomplete": "off"}))
    ssh_passphrase = forms.CharField(required=False, strip=False, label="Key passphrase", help_text=WRITE_ONLY,
                                     widget=UnfoldAdminPasswordWidget(render_value=False))
    ssh_password = forms.CharField(required=False, strip=False, label="Password", help_text=WRITE_ONLY,
                                   widget=UnfoldAdminPasswordWidget(render_value=False))

    class Meta:
        model = RemoteHost
        fields = ("name", "host", "port", "username", "docker_socket", "auth_type", *SECRET_INPUTS)

    def api_data(self, data: dict) -> dict:
        """A create's whole body, or a change's PATCH body: what differs from the stored host."""
        secrets = {api: data[form] for form, api in SECRET_INPUTS.items() if data.get(form)}
        body = {"name": data["name"], "host": data["host"], "port": data["port"], "username": data["username"],
                "dockerSocket": data["docker_socket"], "auth": {"type": data["auth_type"], **secrets}}
        if self.adding:
            return body
        stored = {"name": self.instance.name, "host": self.instance.host, "port": self.instance.port,
                  "username": self.instance.username, "dockerSocket": self.instance.docker_socket,
                  "auth": {"type": self.instance.auth_type}}
        return {name: value for name, value in body.items() if value != stored[name]}

    def apply(self, data, api):
        body = dict(api.validated_data)
        if self.adding or host_limits.changes_connection(body):  # the routes' limits on (re)registering
            host_limits.count_change(self.acting_user, body.get("host", self.instance.host),
                                     body.get("port", self.instance.port))
        if self.adding:
            return remote_host_create(owner=None, data=body, grants={}, created_by=self.acting_user)
        return remote_host_update(host=self.instance, data=body, acting_user=self.acting_user)


@admin.register(RemoteHost)
class RemoteHostAdmin(ServiceFormAdmin):
    form = RemoteHostForm
    list_display = ("name", "scope", "host", "port", "username", "auth_type", "status", "host_key_fingerprint",
                    "docker_version", "last_tested_at")
    list_filter = ("status", "auth_type")
    search_fields = ("name", "host", "owner__email", "id")
    list_select_related = ("owner",)
    readonly_fields = ("id", "execution_target_id", "owner", "status", "host_key_fingerprint", "docker_version",
                       "last_error", "last_tested_at", "created_at", "updated_at")
    actions = ("test_connection",)

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

    def remove(self, host):
        remote_host_delete(host=host)


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
