"""Routes of the Kubernetes cluster registry and of the Proxmox target (listed in agents.urls
ROUTE_MODULES)."""

from django.urls import path

from . import k8s_api, proxmox_api

urlpatterns = [
    path("admin/k8s-clusters", k8s_api.K8sClusterListApi.as_view(), name="admin-k8s-clusters"),
    path("admin/k8s-clusters/<uuid:cluster_id>", k8s_api.K8sClusterDetailApi.as_view(), name="admin-k8s-cluster"),
    path("admin/k8s-clusters/<uuid:cluster_id>/test", k8s_api.K8sClusterTestApi.as_view(),
         name="admin-k8s-cluster-test"),
    path("admin/proxmox", proxmox_api.ProxmoxApi.as_view(), name="admin-proxmox"),
    path("admin/proxmox/test", proxmox_api.ProxmoxTestApi.as_view(), name="admin-proxmox-test"),
]
