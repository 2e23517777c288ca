"""Writes of the Kubernetes cluster registry: register, update, remove and test a cluster."""

from __future__ import annotations

import ipaddress
import logging
import re
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils import timezone

from fleet.errors import Conflict, ValidationFailed

from ..backends.base import BackendError
from ..backends.kubeconfig import KubeconfigInvalid, check_kubeconfig
from ..models import Agent
from .grants import GrantSet, target_grants_delete, target_grants_set
from .k8s_clusters import ClusterStatus, K8sCluster, ServiceType

logger = logging.getLogger(__name__)

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_HOST_LABEL = r"[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?"
_HOST_NAME = re.compile(rf"^(?=.{{1,253}}$){_HOST_LABEL}(\.{_HOST_LABEL})*$")


def _is_host(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
        return True
    except ValueError:
        return bool(_HOST_NAME.match(value))
# Fields whose change means the last test no longer says anything about the cluster.
CONNECTION_FIELDS = ("kubeconfig",)
FIELDS = ("name", "kubeconfig", "namespace", "storage_class", "service_type", "gateway_host")


def _clean(data: dict) -> dict:
    """Check the fields present in `data` (400 validation_error naming each bad one)."""
    errors: dict[str, str] = {}
    out = dict(data)
    if "name" in data:
        out["name"] = (data["name"] or "").strip()
        if not out["name"] or len(out["name"]) > 100:
            errors["name"] = "A name of 1 to 100 characters is required."
    if "kubeconfig" in data:
        try:
            check_kubeconfig(data["kubeconfig"])
        except KubeconfigInvalid as exc:
            errors["kubeconfig"] = str(exc)
    if "namespace" in data and not _DNS_LABEL.match(data["namespace"] or ""):
        errors["namespace"] = "A Kubernetes namespace name (lower-case letters, digits and '-', at most 63)."
    if data.get("storage_class") and not _DNS_SUBDOMAIN.match(data["storage_class"]):
        errors["storageClass"] = "A storage class name (lower-case DNS subdomain), or empty for the default."
    if "service_type" in data and data["service_type"] not in ServiceType.values:
        errors["serviceType"] = f"One of {', '.join(ServiceType.values)}."
    if data.get("gateway_host") and not _is_host(data["gateway_host"]):
        errors["gatewayHost"] = "A host name or IP address (no scheme, no port)."
    if errors:
        raise ValidationFailed(errors)
    return out


def _name_taken(name: str, *, exclude=None) -> bool:
    return K8sCluster.objects.filter(name__iexact=name).exclude(pk=exclude).exists()


def k8s_cluster_validate(*, data: dict, cluster: K8sCluster | None = None) -> dict:
    """The fields of `data` checked and cleaned (400 validation_error naming the bad ones),
    the name unique among clusters."""
    data = _clean({key: value for key, value in data.items() if key in FIELDS})
    if "name" in data and _name_taken(data["name"], exclude=cluster.pk if cluster else None):
        raise ValidationFailed({"name": "A cluster with this name is already registered."})
    return data


@transaction.atomic
def k8s_cluster_create(*, name: str, kubeconfig: str, namespace: str = "default", storage_class: str = "",
                       service_type: str = ServiceType.CLUSTER_IP, gateway_host: str = "",
                       grants: GrantSet | None = None, created_by=None) -> K8sCluster:
    """Register a cluster, and who may deploy to it (agents.targets.grants; platform admins
    always may)."""
    data = k8s_cluster_validate(data={"name": name, "kubeconfig": kubeconfig, "namespace": namespace,
                                      "storage_class": storage_class, "service_type": service_type,
                                      "gateway_host": gateway_host})
    try:
        with transaction.atomic():
            cluster = K8sCluster.objects.create(**data)
    except IntegrityError:
        raise ValidationFailed({"name": "A cluster with this name is already registered."}) from None
    if grants is not None:
        target_grants_set(execution_target_id=cluster.execution_target_id, grants=grants, created_by=created_by)
    return cluster


@transaction.atomic
def k8s_cluster_update(*, cluster: K8sCluster, data: dict, grants: GrantSet | None = None,
                       created_by=None) -> K8sCluster:
    """Change the fields `data` carries (and the grants, when given); a new kubeconfig makes the
    cluster `untested` again."""
    data = k8s_cluster_validate(data=data, cluster=cluster)
    cluster = K8sCluster.objects.select_for_update().get(pk=cluster.pk)
    changed = [field for field in data if getattr(cluster, field) != data[field]]
    for field in changed:
        setattr(cluster, field, data[field])
    if any(field in CONNECTION_FIELDS for field in changed):
        cluster.status, cluster.version, cluster.last_error = ClusterStatus.UNTESTED, "", ""
        changed += ["status", "version", "last_error"]
    if changed:
        cluster.save(update_fields=[*changed, "updated_at"])
    if grants is not None:
        target_grants_set(execution_target_id=cluster.execution_target_id, grants=grants, created_by=created_by)
    return cluster


def agents_on(cluster: K8sCluster) -> int:
    return Agent.objects.filter(execution_target_id=cluster.execution_target_id).count()


@transaction.atomic
def k8s_cluster_delete(*, cluster: K8sCluster) -> None:
    """Deregister a cluster no agent runs on (409 otherwise: delete or move its agents first)."""
    cluster = K8sCluster.objects.select_for_update().get(pk=cluster.pk)
    count = agents_on(cluster)
    if count:
        raise Conflict(f"{count} agent(s) are deployed on this cluster; delete them first.")
    target_grants_delete(execution_target_id=cluster.execution_target_id)  # keyed by id, no foreign key
    cluster.delete()


@dataclass(frozen=True)
class ClusterTest:
    ok: bool
    status: str
    version: str
    error: str | None


def k8s_cluster_test(*, cluster: K8sCluster) -> ClusterTest:
    """Reach the cluster's API server with its kubeconfig and record what it answered."""
    from ..backends.kubernetes import KubernetesBackend  # kubernetes: loaded when a cluster is first called

    try:
        words = KubernetesBackend(cluster).probe()
    except BackendError as exc:
        error = str(exc)
        logger.info("Test of Kubernetes cluster %s failed: %s", cluster.pk, error)
        K8sCluster.objects.filter(pk=cluster.pk).update(status=ClusterStatus.FAILED, last_error=error,
                                                        last_tested_at=timezone.now(), updated_at=timezone.now())
        return ClusterTest(ok=False, status=ClusterStatus.FAILED, version="", error=error)
    version = words.removeprefix("Kubernetes ").strip()
    K8sCluster.objects.filter(pk=cluster.pk).update(status=ClusterStatus.READY, version=version, last_error="",
                                                    last_tested_at=timezone.now(), updated_at=timezone.now())
    return ClusterTest(ok=True, status=ClusterStatus.READY, version=version, error=None)
