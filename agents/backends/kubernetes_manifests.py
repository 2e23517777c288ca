"""The Kubernetes objects of one agent, as API bodies: Deployment, Service, bootstrap ConfigMap,
Secret and PersistentVolumeClaim. Pure functions of a WorkloadSpec and the cluster's settings.

The workload's environment is split in two: what is safe to read (the runtime's fixed settings,
its listen port, the agent id and usage URL) goes to the ConfigMap; everything else (the gateway
token, the usage token, every integration variable) goes to the Secret. Unknown variables are
secret by default, so a new integration cannot leak its credential into a ConfigMap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from agents.backends.base import LABEL_AGENT_ID, LABEL_MANAGED, RUNTIME_UID, WorkloadSpec
from agents.families import FAMILIES, STATE_PATH

CONTAINER = "runtime"
GATEWAY_PORT_NAME = "gateway"
PUBLIC_VARIABLES = frozenset({"FLEET_AGENT_ID", "FLEET_USAGE_URL"})
RESTARTED_AT = "fleet/restarted-at"  # pod-template annotation whose change restarts the pod


@dataclass(frozen=True)
class ObjectNames:
    deployment: str
    service: str
    config_map: str
    secret: str
    claim: str


def names_of(workload: str) -> ObjectNames:
    return ObjectNames(
        deployment=workload,
        service=workload,
        config_map=f"{workload}-bootstrap",
        secret=f"{workload}-secrets",
        claim=f"{workload}-state",
    )


def labels_of(agent_id: str) -> dict[str, str]:
    return {LABEL_AGENT_ID: agent_id, LABEL_MANAGED: "true"}


def public_variables(runtime_family: str) -> frozenset[str]:
    family = FAMILIES.get(runtime_family)
    if family is None:
        return PUBLIC_VARIABLES
    return PUBLIC_VARIABLES | set(family.fixed_env) | set(family.state_env) | {family.port_variable}


def split_env(spec: WorkloadSpec) -> tuple[dict[str, str], dict[str, str]]:
    """(ConfigMap data, Secret data) of the workload's environment."""
    public = public_variables(spec.runtime_family)
    config = {key: str(value) for key, value in spec.env.items() if key in public}
    secret = {key: str(value) for key, value in spec.env.items() if key not in public}
    return config, secret


def _meta(name: str, namespace: str, spec: WorkloadSpec) -> dict:
    return {"name": name, "namespace": namespace, "labels": {**spec.labels, **labels_of(spec.agent_id)}}


def cpu_quantity(vcpu: float) -> str:
    return f"{max(1, math.ceil(vcpu * 1000))}m"


def memory_quantity(ram_mb: int) -> str:
    return f"{int(ram_mb)}Mi"


def config_map(spec: WorkloadSpec, names: ObjectNames, namespace: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(names.config_map, namespace, spec),
            "data": split_env(spec)[0]}


def secret(spec: WorkloadSpec, names: ObjectNames, namespace: str) -> dict:
    # stringData: the API server encodes it; nothing here handles base64 of secrets.
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": _meta(names.secret, namespace, spec), "stringData": split_env(spec)[1]}


def claim(spec: WorkloadSpec, names: ObjectNames, namespace: str, storage_class: str) -> dict:
    body = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": _meta(names.claim, namespace, spec),
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": f"{int(spec.disk_gb)}Gi"}}},
    }
    if storage_class:
        body["spec"]["storageClassName"] = storage_class
    return body


def service(spec: WorkloadSpec, names: ObjectNames, namespace: str, service_type: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _meta(names.service, namespace, spec),
        "spec": {
            "type": service_type,
            "selector": {LABEL_AGENT_ID: spec.agent_id},
            "ports": [{"name": GATEWAY_PORT_NAME, "port": spec.gateway_port, "targetPort": GATEWAY_PORT_NAME,
                       "protocol": "TCP"}],
        },
    }


def deployment(spec: WorkloadSpec, names: ObjectNames, namespace: str) -> dict:
    resources = {"cpu": cpu_quantity(spec.vcpu), "memory": memory_quantity(spec.ram_mb)}
    labels = {**spec.labels, **labels_of(spec.agent_id)}
    container = {
        "name": CONTAINER,
        "image": spec.image,
        "ports": [{"name": GATEWAY_PORT_NAME, "containerPort": spec.gateway_port, "protocol": "TCP"}],
        "envFrom": [{"configMapRef": {"name": names.config_map}}, {"secretRef": {"name": names.secret}}],
        # Requests equal limits: the agent gets what it was allocated (Guaranteed QoS).
        "resources": {"requests": dict(resources), "limits": dict(resources)},
        "volumeMounts": [{"name": "state", "mountPath": STATE_PATH}, {"name": "tmp", "mountPath": "/tmp"}],
        # As on Docker: no capabilities, no privilege gain, a read-only root with a scratch /tmp.
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "capabilities": {"drop": ["ALL"]}},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _meta(names.deployment, namespace, spec),
        "spec": {
            "replicas": 1,
            # One pod at a time: the state volume is ReadWriteOnce.
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": {LABEL_AGENT_ID: spec.agent_id}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [container],
                    # Agents get no credentials of the cluster they run on.
                    "automountServiceAccountToken": False,
                    "enableServiceLinks": False,
                    "securityContext": {"runAsNonRoot": True, "runAsUser": RUNTIME_UID, "runAsGroup": RUNTIME_UID,
                                        "fsGroup": RUNTIME_UID},
                    "volumes": [
                        {"name": "state", "persistentVolumeClaim": {"claimName": names.claim}},
                        {"name": "tmp", "emptyDir": {"sizeLimit": "256Mi"}},
                    ],
                },
            },
        },
    }
