"""The registry rows of the targets people register (agents.backends.registry): how `remote:<id>`
and `k8s:<id>` find their host or cluster and build its backend. TargetsConfig.ready() fills the
rows, so the backends never look a registered target up themselves."""

from __future__ import annotations

from fleet.api.fields import uuid_or_none

from ..backends import registry
from ..backends.base import RuntimeBackend, UnknownTarget
from ..backends.ssh_endpoint import SshEndpoint, allow_private, allowed_networks
from .k8s_clusters import K8sCluster
from .models import RemoteHost, remote_host_of


def stored_secret(value) -> str | None:
    return value if isinstance(value, str) and value else None  # None, or an UndecryptableSecret


def ssh_endpoint_of(host: RemoteHost) -> SshEndpoint:
    """What the SSH connection to `host` needs, its secrets decrypted, under the one host rule."""
    return SshEndpoint(
        host=host.host, port=host.port, username=host.username, auth_type=host.auth_type,
        docker_socket=host.docker_socket, pinned_fingerprint=host.host_key_fingerprint,
        allow_private=allow_private(), allowed_networks=allowed_networks(), private_key=stored_secret(host.private_key),
        passphrase=stored_secret(host.passphrase), password=stored_secret(host.password),
    )


# Lazy client loading: a backend's module (paramiko, kubernetes: about 30 MB each) is imported
# when a target of its kind is first used, never at a web worker's start.


def remote_docker_backend(execution_target_id: str) -> RuntimeBackend:
    """The backend of `remote:<host-id>`; UnknownTarget when no such host is registered."""
    from ..backends.remote_docker import RemoteDockerBackend

    host = remote_host_of(execution_target_id)
    if host is None:
        raise UnknownTarget(f"No Remote Docker host is registered as {execution_target_id!r}.")
    return RemoteDockerBackend(str(host.pk), ssh_endpoint_of(host))


def remote_hosts_listed() -> list[str]:
    return [host.execution_target_id for host in RemoteHost.objects.order_by("created_at").only("id")]


def kubernetes_backend(execution_target_id: str) -> RuntimeBackend:
    """The backend of `k8s:<cluster-id>`; UnknownTarget when no such cluster is registered."""
    from ..backends.kubernetes import KubernetesBackend

    cluster = K8sCluster.objects.filter(pk=uuid_or_none(execution_target_id.partition(":")[2])).first()
    if cluster is None:
        raise UnknownTarget(f"No Kubernetes cluster {execution_target_id!r} is registered.")
    return KubernetesBackend(cluster)


def clusters_listed() -> list[str]:
    return [cluster.execution_target_id for cluster in K8sCluster.objects.order_by("name").only("id")]


def target_rows_fill() -> None:
    registry.target_backend_set(RemoteHost.KIND, factory=remote_docker_backend, instances=remote_hosts_listed)
    registry.target_backend_set(K8sCluster.KIND, factory=kubernetes_backend, instances=clusters_listed)
