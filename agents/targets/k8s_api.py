"""/api/admin/k8s-clusters: the platform admin's registry of Kubernetes clusters (thin views
over agents.targets.k8s_services)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from fleet.api.permissions import PlatformAdminOnly
from fleet.api.serializers import SuccessOut
from fleet.api.views import ApiView
from fleet.errors import NotFound

from . import k8s_services as services
from .grants import grants_of, grants_of_many, grants_parse
from .k8s_clusters import K8sCluster
from .k8s_serializers import K8sClusterIn, K8sClusterOut, K8sClusterTestOut

CLUSTER_NOT_FOUND = "No Kubernetes cluster with this id is registered."


def with_grants(clusters: list[K8sCluster]) -> list[K8sCluster]:
    """The clusters, each with its grants (one query for all) for K8sClusterOut."""
    grants = grants_of_many([cluster.execution_target_id for cluster in clusters])
    for cluster in clusters:
        cluster.grants = grants[cluster.execution_target_id].as_json()
    return clusters


def cluster_out(cluster: K8sCluster) -> dict:
    cluster.refresh_from_db()
    return K8sClusterOut(with_grants([cluster])[0]).data


def cluster_get(cluster_id) -> K8sCluster:
    cluster = K8sCluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        raise NotFound(CLUSTER_NOT_FOUND)
    return cluster


class K8sClusterListApi(ApiView):
    request_examples = {
        "POST": {
            "A cluster reached by NodePort": {
                "name": "prod-eu", "kubeconfig": "<a kubeconfig: YAML with its credentials inline>",
                "namespace": "fleet-agents", "serviceType": "NodePort", "gatewayHost": "10.0.8.20",
                "grants": {"allAccounts": True},
            },
        },
    }
    access = {"GET": (PlatformAdminOnly,), "POST": (PlatformAdminOnly,)}

    @extend_schema(responses=K8sClusterOut(many=True))
    def get(self, request):
        """Registered Kubernetes clusters (platform admins; kubeconfigs never shown)."""
        return Response(K8sClusterOut(with_grants(list(K8sCluster.objects.order_by("name"))), many=True).data)

    @extend_schema(request=K8sClusterIn, responses={201: K8sClusterOut})
    def post(self, request):
        """Register a Kubernetes cluster from a kubeconfig (encrypted at rest)."""
        body = K8sClusterIn(data=request.data)
        body.is_valid(raise_exception=True)
        grants = body.validated_data.get("grants")
        cluster = services.k8s_cluster_create(**body.service_kwargs(), created_by=self.principal.user,
                                              grants=grants_parse(grants) if grants is not None else None)
        return Response(cluster_out(cluster), status=201)


class K8sClusterDetailApi(ApiView):
    request_examples = {
        "PATCH": {
            "Another namespace": {"namespace": "agents"},
        },
    }
    access = {"GET": (PlatformAdminOnly,), "PATCH": (PlatformAdminOnly,), "DELETE": (PlatformAdminOnly,)}

    @extend_schema(responses=K8sClusterOut)
    def get(self, request, cluster_id):
        """One registered Kubernetes cluster."""
        return Response(cluster_out(cluster_get(cluster_id)))

    @extend_schema(request=K8sClusterIn(partial=True), responses=K8sClusterOut)
    def patch(self, request, cluster_id):
        """Change a cluster's name, namespace, kubeconfig or availability."""
        cluster = cluster_get(cluster_id)
        body = K8sClusterIn(data=request.data, partial=True)
        body.is_valid(raise_exception=True)
        grants = body.validated_data.get("grants")
        if grants is not None:
            grants = grants_parse(grants, current=grants_of(cluster.execution_target_id))
        cluster = services.k8s_cluster_update(cluster=cluster, data=body.service_kwargs(), grants=grants,
                                              created_by=self.principal.user)
        return Response(cluster_out(cluster))

    @extend_schema(responses={200: SuccessOut})
    def delete(self, request, cluster_id):
        """Remove a cluster (refused while agents run on it)."""
        services.k8s_cluster_delete(cluster=cluster_get(cluster_id))
        return Response(SuccessOut({"success": True}).data)


class K8sClusterTestApi(ApiView):
    access = {"POST": (PlatformAdminOnly,)}

    @extend_schema(request=None, responses=K8sClusterTestOut)
    def post(self, request, cluster_id):
        """Reach the cluster's API server with its kubeconfig and record the result."""
        result = services.k8s_cluster_test(cluster=cluster_get(cluster_id))
        return Response(K8sClusterTestOut(result).data)
