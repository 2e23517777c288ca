"""The Kubernetes backend: an agent is a Deployment (one replica) with its Service, bootstrap
ConfigMap, Secret and PersistentVolumeClaim on a registered cluster (`k8s:<cluster-id>`),
through the official client built from the cluster's kubeconfig.

Every object carries the labels `fleet.agent_id` / `fleet.managed=true` and a name derived from
the workload name; the agent's `container_id` is `<namespace>/<deployment>`. Stop scales the
Deployment to zero and start back to one; a redeploy deletes the Deployment, Service and
ConfigMap (keeping the claim, the agent's state) and `create` waits for them to be gone before
it creates the replacement. Stats: agents.backends.kubernetes_stats.
"""

from __future__ import annotations

import asyncio
import json
import logging
import posixpath
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from datetime import UTC, datetime

from django.conf import settings
from kubernetes import client as k8s
from kubernetes.client.rest import ApiException

from agents.backends import kubernetes_manifests as manifests
from agents.backends import kubernetes_stats
from agents.backends.base import (
    GATEWAY_PORT,
    LABEL_AGENT_ID,
    BackendError,
    ExecResult,
    ExecSession,
    LiveState,
    LogLine,
    Placement,
    StatsSnapshot,
    WorkloadMissing,
    WorkloadNotRunning,
    WorkloadSpec,
)
from agents.backends.follow import follow_in_thread
from agents.backends.kubernetes_client import API_TIMEOUT, api_client, api_errors, status_of
from agents.backends.kubernetes_exec import open_pod_shell, run_in_pod
from agents.backends.kubernetes_logs import pod_logs

logger = logging.getLogger(__name__)

POLL_SECONDS = 0.2
SCHEDULE_WAIT_SECONDS = 5  # how long create waits for the pod to be placed on a node (for `node`)


class KubernetesBackend:
    """RuntimeBackend (and WorkloadLogs, WorkloadTerminal) for one registered cluster."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.where = f"cluster {cluster.name!r}"

    # -- clients ------------------------------------------------------------------------

    @property
    def _api(self) -> k8s.ApiClient:
        with api_errors(self.where):
            return api_client(self.cluster.kubeconfig)

    @property
    def core(self) -> k8s.CoreV1Api:
        return k8s.CoreV1Api(self._api)

    @property
    def apps(self) -> k8s.AppsV1Api:
        return k8s.AppsV1Api(self._api)

    # -- naming -------------------------------------------------------------------------

    def _locate(self, agent) -> tuple[str, manifests.ObjectNames]:
        """(namespace, object names) of the agent's workload: from its container_id when it has
        one (the namespace it was created in), else the cluster's namespace and the name the
        workload gets (a redeploy that failed before its Deployment existed)."""
        namespace, _, name = (agent.container_id or "").partition("/")
        if not name:
            namespace = self.cluster.namespace
            name = agent.container_name or f"fleet-agent-{uuid.UUID(str(agent.id)).hex[:12]}"
        return namespace, manifests.names_of(name)

    # -- the protocol -------------------------------------------------------------------

    def create(self, agent, spec: WorkloadSpec) -> Placement:
        namespace = self.cluster.namespace
        names = manifests.names_of(spec.name)
        with api_errors(self.where):
            current = self._read(self.apps.read_namespaced_deployment, names.deployment, namespace)
            if current is not None and not _terminating(current):
                if _labels(current).get(LABEL_AGENT_ID) != spec.agent_id:
                    raise BackendError(f"A Deployment named {names.deployment!r} already exists for something else.")
                return self._placement(namespace, names, spec.agent_id)  # a retried job
            # The replacement of a redeploy is created only once the previous objects are gone.
            self._await_gone(namespace, names)
            self._ensure_claim(spec, names, namespace)
            self._replace(self.core.create_namespaced_secret, self.core.delete_namespaced_secret,
                          self.core.read_namespaced_secret, manifests.secret(spec, names, namespace), namespace)
            self._replace(self.core.create_namespaced_config_map, self.core.delete_namespaced_config_map,
                          self.core.read_namespaced_config_map, manifests.config_map(spec, names, namespace),
                          namespace)
            self._replace(self.core.create_namespaced_service, self.core.delete_namespaced_service,
                          self.core.read_namespaced_service,
                          manifests.service(spec, names, namespace, self.cluster.service_type), namespace)
            self.apps.create_namespaced_deployment(namespace, manifests.deployment(spec, names, namespace),
                                                   _request_timeout=API_TIMEOUT)
            return self._placement(namespace, names, spec.agent_id, wait=True)

    def start(self, agent) -> None:
        self._scale(agent, 1)

    def stop(self, agent) -> None:
        try:
            self._scale(agent, 0)
        except WorkloadMissing:
            return  # stopping a missing workload is not an error

    def restart(self, agent) -> None:
        namespace, names = self._locate(agent)
        body = {"spec": {"replicas": 1, "template": {"metadata": {"annotations": {
            manifests.RESTARTED_AT: datetime.now(UTC).isoformat()}}}}}
        with api_errors(self.where):
            try:
                self.apps.patch_namespaced_deployment(names.deployment, namespace, body, _request_timeout=API_TIMEOUT)
            except ApiException as exc:
                raise _missing(exc, "The agent's Deployment no longer exists on the cluster.") from exc

    def remove(self, agent, *, keep_state: bool = False) -> None:
        """Delete the Deployment (its pods first), Service and ConfigMap and wait for them to go;
        without `keep_state` the Secret and the claim (the agent's state) go too."""
        namespace, names = self._locate(agent)
        with api_errors(self.where):
            deletions = [
                (self.apps.delete_namespaced_deployment, names.deployment),
                (self.core.delete_namespaced_service, names.service),
                (self.core.delete_namespaced_config_map, names.config_map),
            ]
            if not keep_state:
                deletions += [(self.core.delete_namespaced_secret, names.secret),
                              (self.core.delete_namespaced_persistent_volume_claim, names.claim)]
            for delete, name in deletions:
                self._delete(delete, name, namespace)
            if not self._await_gone(namespace, names, fail=False):
                logger.warning("The objects of agent %s are still terminating on %s; the next create waits",
                               agent.id, self.where)

    def inspect(self, agent) -> LiveState:
        namespace, names = self._locate(agent)
        with api_errors(self.where):
            deployment = self._read(self.apps.read_namespaced_deployment, names.deployment, namespace)
            if deployment is None or _terminating(deployment):
                return LiveState(exists=False, running=False, status="missing")
            host_port = self._gateway_port(namespace, names)
            pod = self._pod(namespace, str(agent.id))
        return _live_state(deployment, pod, host_port)

    def stats(self, agent) -> StatsSnapshot:
        namespace, names = self._locate(agent)
        with api_errors(self.where):
            deployment = self._read(self.apps.read_namespaced_deployment, names.deployment, namespace)
            if deployment is None or _terminating(deployment):
                raise WorkloadMissing("The agent's Deployment no longer exists on the cluster.")
            pod = self._pod(namespace, str(agent.id))
            live = _live_state(deployment, pod, None)
            metrics = summary = None
            if pod is not None and live.running:
                pod_name = pod["metadata"]["name"]
                metrics = self._optional_json(k8s.CustomObjectsApi(self._api).get_namespaced_custom_object,
                                              "metrics.k8s.io", "v1beta1", namespace, "pods", pod_name)
                node = (pod.get("spec") or {}).get("nodeName")
                if node:
                    summary = self._optional_json(self.core.connect_get_node_proxy_with_path, node, "stats/summary")
        return kubernetes_stats.snapshot(
            metrics=metrics, summary=summary, namespace=namespace,
            pod=(pod or {}).get("metadata", {}).get("name", ""), container=manifests.CONTAINER,
            memory_limit_bytes=_memory_limit(deployment), running=live.running, started_at=live.started_at,
        )

    def gateway_endpoint(self, agent) -> tuple[str, int]:
        """NodePort: (gatewayHost, else the pod's node address; the node port). ClusterIP:
        (gatewayHost, else the Service's cluster DNS name; the gateway port)."""
        namespace, names = self._locate(agent)
        with api_errors(self.where):
            service = self._read(self.core.read_namespaced_service, names.service, namespace)
            if service is None:
                raise WorkloadMissing("The agent's Service no longer exists on the cluster.")
            port = _service_port(service)
            if (service.get("spec") or {}).get("type") == "NodePort":
                host = self.cluster.gateway_host
                if not host:
                    pod = self._pod(namespace, str(agent.id))
                    host = ((pod or {}).get("status") or {}).get("hostIP") or ""
                if not host or not port:
                    raise WorkloadMissing("The agent's gateway has no node address or port yet.")
                return host, port
        return self.cluster.gateway_host or f"{names.service}.{namespace}.svc", GATEWAY_PORT

    def probe(self) -> str:
        with api_errors(self.where):
            info = k8s.VersionApi(self._api).get_code(_request_timeout=API_TIMEOUT)
        return f"Kubernetes {info.git_version}"

    def read_state_file(self, agent, path: str) -> bytes | None:
        target = _state_path(path)
        result = self.exec(agent, ["sh", "-c", 'test -f "$0" || exit 3; cat "$0"', target],
                           timeout=15, max_output=settings.AGENT_FILE_MAX_BYTES)
        if result.exit_code == 3:
            return None
        if result.exit_code != 0:
            raise BackendError(f"Could not read {target} in the agent's pod (exit {result.exit_code}).")
        return result.output

    def write_state_file(self, agent, path: str, data: bytes, *, mode: int = 0o600) -> None:
        target = _state_path(path)
        namespace, names = self._locate(agent)
        with api_errors(self.where):
            pod = self._running_pod(agent, namespace)
            code, _ = run_in_pod(self.core, namespace, pod, manifests.CONTAINER,
                                 ["sh", "-c", f'umask 077; cat > "$0" && chmod {mode:o} "$0"', target],
                                 stdin=data, timeout=15, max_output=4096, stop_when=None)
        if code != 0:
            raise BackendError(f"Could not write {target} in the agent's pod (exit {code}).")

    def exec(self, agent, argv: Sequence[str], *, timeout: float, max_output: int,
             stop_when: Callable[[bytes], bool] | None = None) -> ExecResult:
        argv = [str(word) for word in argv]
        if not argv:
            raise BackendError("Nothing to run: the command is empty.")
        namespace, _ = self._locate(agent)
        with api_errors(self.where):
            pod = self._running_pod(agent, namespace)
            return run_in_pod(self.core, namespace, pod, manifests.CONTAINER, argv, stdin=None, timeout=timeout,
                              max_output=max_output, stop_when=stop_when, as_result=True)

    def logs(self, agent, *, tail: int | None = 200, since: datetime | None = None,
             follow: bool = False) -> Iterator[LogLine]:
        namespace, _ = self._locate(agent)
        with api_errors(self.where):
            pod = self._pod(namespace, str(agent.id))
            if pod is None:
                raise WorkloadMissing("The agent has no pod on the cluster.")
        return pod_logs(self.core, namespace, pod["metadata"]["name"], manifests.CONTAINER, where=self.where,
                        tail=tail, since=since, follow=follow)

    def follow_logs(self, agent, *, tail: int | None = 200, since: datetime | None = None) -> AsyncIterator[LogLine]:
        # The client's log stream only blocks: read it in a thread (agents.backends.follow).
        return follow_in_thread(self.logs(agent, tail=tail, since=since, follow=True))

    async def attach_exec(self, agent, *, cols: int, rows: int) -> ExecSession:
        """WorkloadTerminal through the pod exec subresource. The client's WebSocket only blocks:
        the shell is opened, and read, in a thread (agents.backends.kubernetes_exec)."""
        return await asyncio.to_thread(self._attach_blocking, agent, cols, rows)

    def _attach_blocking(self, agent, cols: int, rows: int) -> ExecSession:
        namespace, _ = self._locate(agent)
        with api_errors(self.where):
            try:
                pod = self._running_pod(agent, namespace)
                return open_pod_shell(self.core, namespace, pod, manifests.CONTAINER, cols=cols, rows=rows)
            except ApiException as exc:  # 404: the pod went between the listing and the exec
                raise _missing(exc, "The agent has no pod on the cluster.") from exc

    # -- helpers ------------------------------------------------------------------------

    def _read(self, read, name: str, namespace: str) -> dict | None:
        """The object as a plain dict (the API's own field names), None when it does not exist."""
        try:
            response = read(name, namespace, _preload_content=False, _request_timeout=API_TIMEOUT)
        except ApiException as exc:
            if status_of(exc) == 404:
                return None
            raise
        return json.loads(response.data or b"{}")

    def _optional_json(self, read, *args) -> dict | None:
        """A read of an optional API (metrics-server, the kubelet through nodes/proxy): None when
        the cluster does not serve it or refuses it; unreachable still raises."""
        try:
            response = read(*args, _preload_content=False, _request_timeout=API_TIMEOUT)
        except ApiException as exc:
            logger.info("%s answered %s for %s", self.where, exc.status, getattr(read, "__name__", read))
            return None
        try:
            data = json.loads(response.data or b"{}")
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    def _delete(self, delete, name: str, namespace: str) -> None:
        try:
            delete(name, namespace, propagation_policy="Foreground", _request_timeout=API_TIMEOUT)
        except ApiException as exc:
            if status_of(exc) != 404:
                raise

    def _await_gone(self, namespace: str, names: manifests.ObjectNames, *, fail: bool = True) -> bool:
        """Wait until the Deployment, Service and ConfigMap of these names no longer exist. On
        timeout: False, or with `fail` a transient BackendError (the job retries later)."""
        reads = [(self.apps.read_namespaced_deployment, names.deployment),
                 (self.core.read_namespaced_service, names.service),
                 (self.core.read_namespaced_config_map, names.config_map)]
        deadline = time.monotonic() + float(settings.K8S_DELETE_TIMEOUT_SECONDS)
        while True:
            left = [name for read, name in reads if self._read(read, name, namespace) is not None]
            if not left:
                return True
            if time.monotonic() >= deadline:
                if not fail:
                    return False
                error = BackendError(f"The previous objects of this agent are still being deleted: {', '.join(left)}.")
                error.transient = True
                raise error
            time.sleep(POLL_SECONDS)

    def _ensure_claim(self, spec: WorkloadSpec, names: manifests.ObjectNames, namespace: str) -> None:
        """The state claim, created on first deploy and kept afterwards (it is the agent's state);
        grown when disk_gb grew (a resource change), never shrunk: a claim cannot shrink, which
        the registry declares so a resource change refuses it first."""
        body = manifests.claim(spec, names, namespace, self.cluster.storage_class)
        try:
            self.core.create_namespaced_persistent_volume_claim(namespace, body, _request_timeout=API_TIMEOUT)
            return
        except ApiException as exc:
            if status_of(exc) != 409:
                raise
        current = self._read(self.core.read_namespaced_persistent_volume_claim, names.claim, namespace)
        requested = ((((current or {}).get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")
        wanted = body["spec"]["resources"]["requests"]["storage"]
        if current is None or kubernetes_stats.quantity(wanted) <= kubernetes_stats.quantity(requested):
            return
        patch = {"spec": {"resources": {"requests": {"storage": wanted}}}}
        try:
            self.core.patch_namespaced_persistent_volume_claim(names.claim, namespace, patch,
                                                               _request_timeout=API_TIMEOUT)
        except ApiException as exc:
            if status_of(exc) in (403, 422):  # the API server's admission: no expansion for this claim
                raise BackendError(f"The cluster refused to grow the agent's state claim from {requested} to "
                                   f"{wanted} (its storage class must allow volume expansion): "
                                   f"{_status_message(exc)}") from exc
            raise

    def _replace(self, create, delete, read, body: dict, namespace: str) -> None:
        """Create the object; one left from an earlier attempt is deleted and created anew (so a
        Secret never keeps a variable the agent no longer has)."""
        name = body["metadata"]["name"]
        deadline = time.monotonic() + float(settings.K8S_DELETE_TIMEOUT_SECONDS)
        while True:
            try:
                create(namespace, body, _request_timeout=API_TIMEOUT)
                return
            except ApiException as exc:
                if status_of(exc) != 409 or time.monotonic() >= deadline:
                    raise
            existing = self._read(read, name, namespace)
            owner = body["metadata"]["labels"][LABEL_AGENT_ID]
            if existing is not None and _labels(existing).get(LABEL_AGENT_ID) != owner:
                raise BackendError(f"A {body['kind']} named {name!r} already exists for something else.")
            if existing is not None and not _terminating(existing):
                self._delete(delete, name, namespace)
            time.sleep(POLL_SECONDS)

    def _scale(self, agent, replicas: int) -> None:
        namespace, names = self._locate(agent)
        with api_errors(self.where):
            try:
                self.apps.patch_namespaced_deployment(names.deployment, namespace, {"spec": {"replicas": replicas}},
                                                      _request_timeout=API_TIMEOUT)
            except ApiException as exc:
                raise _missing(exc, "The agent's Deployment no longer exists on the cluster.") from exc

    def _pods(self, namespace: str, agent_id: str) -> list[dict]:
        response = self.core.list_namespaced_pod(namespace, label_selector=f"{LABEL_AGENT_ID}={agent_id}",
                                                 _preload_content=False, _request_timeout=API_TIMEOUT)
        items = json.loads(response.data or b"{}").get("items") or []
        # The selector again: a server (or proxy) that ignores it must not hand us another's pod.
        return [pod for pod in items if _labels(pod).get(LABEL_AGENT_ID) == agent_id and not _terminating(pod)]

    def _pod(self, namespace: str, agent_id: str) -> dict | None:
        """The agent's current pod: the newest one not being deleted."""
        pods = self._pods(namespace, agent_id)
        pods.sort(key=lambda pod: (pod.get("metadata") or {}).get("creationTimestamp") or "")
        return pods[-1] if pods else None

    def _running_pod(self, agent, namespace: str) -> str:
        pod = self._pod(namespace, str(agent.id))
        if pod is None:
            raise WorkloadMissing("The agent has no pod on the cluster.")
        if (pod.get("status") or {}).get("phase") != "Running":
            phase = (pod.get("status") or {}).get("phase") or "pending"
            raise WorkloadNotRunning(f"The agent's pod is {phase}, not running.")
        return pod["metadata"]["name"]

    def _gateway_port(self, namespace: str, names: manifests.ObjectNames) -> int | None:
        service = self._read(self.core.read_namespaced_service, names.service, namespace)
        return _service_port(service) if service is not None else None

    def _placement(self, namespace: str, names: manifests.ObjectNames, agent_id: str, *,
                   wait: bool = False) -> Placement:
        """Where the workload lives; `node` is the pod's node, waited for a moment after a create."""
        deadline = time.monotonic() + (SCHEDULE_WAIT_SECONDS if wait else 0)
        while True:
            pod = self._pod(namespace, agent_id)
            node = ((pod or {}).get("spec") or {}).get("nodeName") or ""
            if node or time.monotonic() >= deadline:
                break
            time.sleep(POLL_SECONDS)
        return Placement(container_id=f"{namespace}/{names.deployment}", container_name=names.deployment, node=node,
                         host_port=self._gateway_port(namespace, names))


def _live_state(deployment: dict, pod: dict | None, host_port: int | None) -> LiveState:
    """The engine words of base.LiveState from a Deployment and its current pod (whose node
    the scheduler chose: `spec.nodeName`, None until it is placed)."""
    node = ((pod or {}).get("spec") or {}).get("nodeName") or None
    if (deployment.get("spec") or {}).get("replicas") == 0:
        return LiveState(exists=True, running=False, status="exited", host_port=host_port, node=node)
    if pod is None:
        return LiveState(exists=True, running=False, status="created", host_port=host_port)
    state = _container_status(pod)
    current = state.get("state") or {}
    last = (state.get("lastState") or {}).get("terminated") or {}
    restarts = int(state.get("restartCount") or 0)
    oom_killed = ((current.get("terminated") or last).get("reason") or "") == "OOMKilled"
    if "running" in current and (pod.get("status") or {}).get("phase") == "Running":
        return LiveState(exists=True, running=True, status="running", restart_count=restarts, oom_killed=oom_killed,
                         started_at=_time((current.get("running") or {}).get("startedAt")), host_port=host_port,
                         node=node)
    waiting = (current.get("waiting") or {}).get("reason") or ""
    terminated = current.get("terminated") or {}
    status = "restarting" if waiting == "CrashLoopBackOff" else ("exited" if terminated else "created")
    return LiveState(exists=True, running=False, status=status, restart_count=restarts, oom_killed=oom_killed,
                     host_port=host_port, exit_code=terminated.get("exitCode", last.get("exitCode")), node=node)


def _status_message(exc: ApiException) -> str:
    """The message of the API server's Status answer, else its reason."""
    try:
        return str(json.loads(exc.body or "{}").get("message") or exc.reason)
    except (TypeError, ValueError):
        return str(exc.reason)


def _labels(obj: dict) -> dict:
    return (obj.get("metadata") or {}).get("labels") or {}


def _terminating(obj: dict) -> bool:
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def _missing(exc: ApiException, message: str) -> Exception:
    return WorkloadMissing(message) if status_of(exc) == 404 else exc


def _container_status(pod: dict) -> dict:
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if status.get("name") == manifests.CONTAINER:
            return status
    return {}


def _service_port(service: dict) -> int | None:
    spec = service.get("spec") or {}
    ports = spec.get("ports") or []
    if not ports:
        return None
    if spec.get("type") == "NodePort":
        return ports[0].get("nodePort")
    return ports[0].get("port")


def _memory_limit(deployment: dict) -> float:
    containers = (((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
    for container in containers:
        if container.get("name") == manifests.CONTAINER:
            return kubernetes_stats.quantity(((container.get("resources") or {}).get("limits") or {}).get("memory"))
    return 0.0


def _time(value) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def _state_path(path: str) -> str:
    joined = posixpath.normpath(posixpath.join(manifests.STATE_PATH, path))
    if posixpath.isabs(path) or not joined.startswith(manifests.STATE_PATH + "/"):
        raise ValueError(f"{path!r} is not a path inside the state folder.")
    return joined
