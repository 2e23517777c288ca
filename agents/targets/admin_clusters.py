"""Admin console: Kubernetes clusters, with their status and a test action. Registering and
editing go through agents.targets.k8s_services, as the API does. The kubeconfig is write-only:
the form never shows it back (leave it empty to keep the stored one)."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages

from fleet.admin_base import ModelAdmin
from fleet.errors import FleetError, ValidationFailed

from ..backends.kubeconfig import KubeconfigInvalid, check_kubeconfig
from . import k8s_services as services
from .k8s_clusters import K8sCluster

EDITABLE = ("name", "namespace", "storage_class", "service_type", "gateway_host")
MODEL_FIELD = {"storageClass": "storage_class", "serviceType": "service_type", "gatewayHost": "gateway_host",
               "kubeconfig": "kubeconfig_text"}


class K8sClusterForm(forms.ModelForm):
    kubeconfig_text = forms.CharField(
        label="Kubeconfig", required=False, strip=False,
        widget=forms.Textarea(attrs={"rows": 12, "autocomplete": "off", "spellcheck": "false"}),
        help_text="YAML with credentials inline. Stored encrypted and never shown; leave empty to keep it.",
    )

    class Meta:
        model = K8sCluster
        fields = EDITABLE

    def clean_kubeconfig_text(self):
        text = self.cleaned_data.get("kubeconfig_text") or ""
        if not text.strip():
            if self.instance._state.adding:
                raise forms.ValidationError("A kubeconfig is required.")
            return ""
        try:
            check_kubeconfig(text)
        except KubeconfigInvalid as exc:
            raise forms.ValidationError(str(exc)) from None
        return text

    def clean(self):
        cleaned = super().clean()
        data = {field: cleaned[field] for field in EDITABLE if field in cleaned}
        try:
            services.k8s_cluster_validate(data=data, cluster=None if self.instance._state.adding else self.instance)
        except ValidationFailed as exc:
            for field, problems in exc.fields.items():
                name = MODEL_FIELD.get(field, field)
                self.add_error(name if name in self.fields else None, "; ".join(problems))
        return cleaned


@admin.register(K8sCluster)
class K8sClusterAdmin(ModelAdmin):
    form = K8sClusterForm
    list_display = ("name", "status", "version", "namespace", "service_type", "gateway_host", "last_tested_at",
                    "agent_count")
    list_filter = ("status", "service_type")
    search_fields = ("name", "id", "gateway_host")
    readonly_fields = ("id", "status", "version", "last_tested_at", "last_error", "created_at", "updated_at")
    actions = ("test_clusters",)

    def get_fields(self, request, obj=None):
        return (*EDITABLE, "kubeconfig_text", *self.readonly_fields)

    @admin.display(description="Agents")
    def agent_count(self, cluster: K8sCluster) -> int:
        return services.agents_on(cluster)

    def save_model(self, request, obj, form, change):
        data = {field: form.cleaned_data[field] for field in EDITABLE if field in form.cleaned_data}
        if form.cleaned_data.get("kubeconfig_text"):
            data["kubeconfig"] = form.cleaned_data["kubeconfig_text"]
        # The form checked these with the same rules (K8sClusterForm.clean).
        if change:
            saved = services.k8s_cluster_update(cluster=K8sCluster.objects.get(pk=obj.pk), data=data)
        else:
            saved = services.k8s_cluster_create(**data)
        obj.pk = saved.pk
        obj.refresh_from_db()

    def delete_model(self, request, obj):
        try:
            services.k8s_cluster_delete(cluster=obj)
        except FleetError as exc:
            self.message_user(request, exc.message, messages.ERROR)

    def delete_queryset(self, request, queryset):
        for cluster in queryset:
            self.delete_model(request, cluster)

    @admin.action(description="Test the connection of the selected clusters")
    def test_clusters(self, request, queryset):
        for cluster in queryset:
            result = services.k8s_cluster_test(cluster=cluster)
            if result.ok:
                self.message_user(request, f"{cluster.name}: reached Kubernetes {result.version}.", messages.SUCCESS)
            else:
                self.message_user(request, f"{cluster.name}: {result.error}", messages.ERROR)
