"""Input and output shapes of /api/admin/k8s-clusters. The kubeconfig is write-only: no output
shape has it."""

from __future__ import annotations

from rest_framework import serializers

from fleet.api.fields import StrictCharField
from fleet.api.serializers import TimestampField

from .grants import GrantsIn, GrantsOut
from .k8s_clusters import ServiceType

# request name -> model field
FIELD_OF = {"name": "name", "kubeconfig": "kubeconfig", "namespace": "namespace", "storageClass": "storage_class",
            "serviceType": "service_type", "gatewayHost": "gateway_host"}


class K8sClusterIn(serializers.Serializer):
    name = StrictCharField(max_length=100)
    kubeconfig = serializers.CharField(write_only=True, max_length=256 * 1024, trim_whitespace=False,
                                       help_text="YAML, credentials inline; stored encrypted, never shown")
    namespace = StrictCharField(max_length=63, required=False)
    storageClass = StrictCharField(max_length=253, required=False, allow_blank=True)  # noqa: N815 - API name
    serviceType = serializers.ChoiceField(choices=ServiceType.values, required=False)  # noqa: N815
    gatewayHost = StrictCharField(max_length=253, required=False, allow_blank=True)  # noqa: N815
    grants = GrantsIn(required=False, help_text="who may deploy to it; each key given replaces that part")

    def service_kwargs(self) -> dict:
        return {FIELD_OF[key]: value for key, value in self.validated_data.items() if key in FIELD_OF}


class K8sClusterOut(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    namespace = serializers.CharField()
    storageClass = serializers.CharField(source="storage_class")  # noqa: N815
    serviceType = serializers.CharField(source="service_type")  # noqa: N815
    gatewayHost = serializers.CharField(source="gateway_host")  # noqa: N815
    executionTargetId = serializers.CharField(source="execution_target_id")  # noqa: N815
    status = serializers.CharField(help_text="untested, ready or failed")
    version = serializers.CharField(help_text="the API server's version at the last successful test")
    lastTestedAt = TimestampField(source="last_tested_at", allow_null=True)  # noqa: N815
    lastError = serializers.CharField(source="last_error")  # noqa: N815
    grants = GrantsOut(help_text="who may deploy to it besides platform admins")
    createdAt = TimestampField(source="created_at")  # noqa: N815
    updatedAt = TimestampField(source="updated_at")  # noqa: N815


class K8sClusterTestOut(serializers.Serializer):
    ok = serializers.BooleanField()
    status = serializers.CharField()
    version = serializers.CharField()
    error = serializers.CharField(allow_null=True)
