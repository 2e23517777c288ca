"""The Kubernetes cluster registry: clusters a platform admin registered as deploy targets.

An agent on a cluster has execution_target_id `k8s:<cluster-id>`. The kubeconfig is encrypted
at rest (fleet.crypto) and never leaves the server: no response, admin page or log shows it.
"""

from __future__ import annotations

import uuid

from django.db import models

from fleet.crypto import EncryptedTextField

TARGET_KIND = "k8s"


class ServiceType(models.TextChoices):
    CLUSTER_IP = "ClusterIP"
    NODE_PORT = "NodePort"


class ClusterStatus(models.TextChoices):
    UNTESTED = "untested"  # registered or its connection changed since the last test
    READY = "ready"  # the last test reached the API server
    FAILED = "failed"  # the last test could not


class K8sCluster(models.Model):
    KIND = TARGET_KIND  # its execution target id is `k8s:<id>` (agents.backends.registry's row)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=100, unique=True)
    kubeconfig = EncryptedTextField()
    namespace = models.CharField(max_length=63, default="default")
    storage_class = models.CharField(max_length=253, blank=True, default="")  # "": the cluster's default
    service_type = models.CharField(max_length=20, choices=ServiceType.choices, default=ServiceType.CLUSTER_IP)
    # Where Fleet reaches agents' gateways: a node or load-balancer address for NodePort; for
    # ClusterIP empty means the Service's in-cluster DNS name (Fleet runs inside the cluster).
    gateway_host = models.CharField(max_length=253, blank=True, default="")
    status = models.CharField(max_length=12, choices=ClusterStatus.choices, default=ClusterStatus.UNTESTED)
    last_tested_at = models.DateTimeField(null=True, blank=True)
    version = models.CharField(max_length=100, blank=True, default="")  # the API server's gitVersion
    last_error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "targets"
        ordering = ("name",)
        verbose_name = "Kubernetes cluster"

    def __str__(self) -> str:
        return self.name

    @property
    def execution_target_id(self) -> str:
        return f"{TARGET_KIND}:{self.pk}"
