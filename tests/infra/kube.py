"""A Kubernetes API server for tests: kmock's KubernetesEmulator served on 127.0.0.1 from a
thread of its own, as the official client meets it.

kmock keeps the objects a client writes (create, patch, delete, finalizers, watches) but runs
no controllers and serves no kubelet. `FleetCluster` extends it the way its docs invite
("inherit and implement for your cases") with what the cluster itself does for what Fleet
creates, and nothing Fleet's own code decides:
- the Deployment controller and scheduler: a Deployment's pod appears on node `node-a` (or the
  node a test sets in `schedule_on`, as the scheduler's choice) as Running (creationTimestamp,
  hostIP, container status with startedAt), is replaced when the pod template changes (a
  restart), and goes when replicas drop to 0 or the Deployment goes;
- a NodePort Service gets its node port from 30000 up;
- the API server's checks on a claim's storage request (PersistentVolumeClaimResize admission
  and validation): growing it needs its StorageClass to exist with `allowVolumeExpansion: true`
  (403 Forbidden otherwise; a claim naming no class cannot grow here: the emulator has no
  default class), shrinking it is 422 Invalid; `storage_class()` stores a class;
- the kubelet's pod log (`pods/<name>/log`, honouring tailLines/sinceSeconds/timestamps) and
  its stats summary (`nodes/<node>/proxy/stats/summary`), from what the test puts in
  `cluster.pod_logs` and `cluster.summaries`; the metrics API serves objects the test stores
  under `metrics.k8s.io/v1beta1/pods`;
- the kubelet's exec (`pods/<name>/exec`) for the pods a test opts in (`exec_into`): the command
  runs on this machine (tests/infra/kube_exec.py); other pods' exec is refused.
A test that wants a slow deletion puts a finalizer on an object (kmock then keeps it, marked
with deletionTimestamp, until the finalizer is removed: `release()`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import secrets
import threading
from datetime import UTC, datetime, timedelta

import aiohttp.web
import attrs
import kmock
import pytest
from kmock import KubernetesEmulator, Server

from tests.infra.kube_exec import KubeletExec

NODE = "node-a"
NODE_IP = "10.0.0.11"
DEPLOYMENTS = kmock.resource("apps/v1/deployments")
PODS = kmock.resource("v1/pods")
SERVICES = kmock.resource("v1/services")
CLAIMS = kmock.resource("v1/persistentvolumeclaims")
STORAGE_CLASSES = kmock.resource("storage.k8s.io/v1/storageclasses")


def _gibibytes(quantity: str) -> float:
    """The quantities Fleet writes for claims (`7Gi`), as a number of GiB."""
    return float(str(quantity).removesuffix("Gi"))


def _status(code: int, reason: str, message: str) -> aiohttp.web.StreamResponse:
    return aiohttp.web.json_response({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code,
                                      "reason": reason, "message": message}, status=code)


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


@attrs.define(kw_only=True)
class FleetCluster(KubernetesEmulator):
    pod_logs: dict = attrs.field(factory=dict)  # (namespace, pod) -> [(datetime, line)]
    summaries: dict = attrs.field(factory=dict)  # node -> kubelet summary dict
    schedule_on: str = NODE  # the node the scheduler places the next pod on
    exec_pods: set = attrs.field(factory=set)  # (namespace, pod) whose exec runs here
    kubelet: KubeletExec = attrs.field(factory=KubeletExec)
    _serial: itertools.count = attrs.field(factory=lambda: itertools.count(1))
    _ports: itertools.count = attrs.field(factory=lambda: itertools.count(30000))

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        self.resources.load_bundled()  # the built-in resources, so empty lists answer 200
        # The official client asks for /version/ (trailing slash); kmock knows /version.
        self.fallback["get /version/"] << self._serve_server_version

    async def __call__(self, raw_request: aiohttp.web.BaseRequest) -> aiohttp.web.StreamResponse:
        parts = raw_request.path.strip("/").split("/")  # api/v1/namespaces/<ns>/pods/<pod>/exec
        if (raw_request.headers.get("Upgrade", "").lower() == "websocket" and len(parts) == 7
                and parts[-1] == "exec" and (parts[3], parts[5]) in self.exec_pods):
            self._requests.append(await kmock.Request._parse(raw_request, id=len(self._requests)))
            return await self.kubelet.serve(raw_request)
        return await super().__call__(raw_request)

    async def _handle(self, request: kmock.Request) -> aiohttp.web.StreamResponse:
        resource = request.resource
        if resource is not None and resource.plural == "pods" and request.subresource == "log":
            return self._serve_log(request)
        if resource is not None and resource.plural == "nodes" and (request.subresource or "") == "proxy/stats/summary":
            summary = self.summaries.get(request.name)
            if summary is None:
                return aiohttp.web.json_response({"kind": "Status", "code": 404, "reason": "NotFound"}, status=404)
            return aiohttp.web.json_response(summary)
        if resource == CLAIMS and request.action == kmock.action.UPDATE and not request.subresource:
            refusal = self._refuse_claim_resize(request)
            if refusal is not None:
                return refusal
        response = await super()._handle(request)
        if resource is not None and request.action in (kmock.action.CREATE, kmock.action.UPDATE,
                                                       kmock.action.DELETE):
            name = request.name or ((request.data or {}).get("metadata") or {}).get("name")
            namespace = request.namespace or ((request.data or {}).get("metadata") or {}).get("namespace")
            async with self._lock:
                if resource == DEPLOYMENTS and not request.subresource:
                    self._reconcile(namespace, name)
                elif resource == SERVICES and request.action == kmock.action.CREATE:
                    self._assign_node_port(namespace, name)
        return response

    # -- what the API server checks --------------------------------------------------------

    def _refuse_claim_resize(self, request: kmock.Request) -> aiohttp.web.StreamResponse | None:
        claim = self._live(CLAIMS, request.namespace, request.name)
        spec = (request.data or {}).get("spec") or {}
        wanted = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
        if claim is None or wanted is None:
            return None
        current = claim["spec"]["resources"]["requests"]["storage"]
        if _gibibytes(wanted) < _gibibytes(current):
            return _status(422, "Invalid", f'PersistentVolumeClaim "{request.name}" is invalid: '
                                           "spec.resources.requests.storage: Forbidden: field can not be less than "
                                           "previous value")
        storage_class = self._live(STORAGE_CLASSES, None, claim["spec"].get("storageClassName") or "")
        if _gibibytes(wanted) > _gibibytes(current) and not (storage_class or {}).get("allowVolumeExpansion"):
            return _status(403, "Forbidden", f'persistentvolumeclaims "{request.name}" is forbidden: only '
                                             "dynamically provisioned pvc can be resized and the storageclass that "
                                             "provisions the pvc must support resize")
        return None

    # -- what the controllers do ----------------------------------------------------------

    def _live(self, resource, namespace, name) -> dict | None:
        key = (resource, namespace, name)
        if key not in self.objects or self.objects[key].deleted:
            return None
        return self.objects[key].raw

    def _reconcile(self, namespace: str, name: str) -> None:
        deployment = self._live(DEPLOYMENTS, namespace, name)
        pods = [(key, obj.raw) for key, obj in list(self.objects.items())
                if key[0] == PODS and key[1] == namespace and not obj.deleted
                and (obj.raw.get("metadata") or {}).get("annotations", {}).get("test/owner") == name]
        alive = deployment is not None and not deployment.get("metadata", {}).get("deletionTimestamp")
        replicas = (deployment or {}).get("spec", {}).get("replicas", 1) if alive else 0
        template = (deployment or {}).get("spec", {}).get("template") or {}
        fingerprint = json.dumps(template, sort_keys=True)
        keep = []
        for key, pod in pods:
            if replicas and pod["metadata"]["annotations"].get("test/template") == fingerprint and not keep:
                keep.append(key)
            else:
                self.objects[key].delete()
        if replicas and not keep:
            serial = next(self._serial)
            pod_name = f"{name}-{secrets.token_hex(3)}"
            started = (datetime.now(UTC) - timedelta(seconds=5)).isoformat().replace("+00:00", "Z")
            self.objects[PODS, namespace, pod_name] = {
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": pod_name, "namespace": namespace,
                             "labels": dict((template.get("metadata") or {}).get("labels") or {}),
                             "annotations": {"test/owner": name, "test/template": fingerprint},
                             "creationTimestamp": f"{_now()[:-1]}{serial:06d}Z"},
                "spec": {**(template.get("spec") or {}), "nodeName": self.schedule_on},
                "status": {"phase": "Running", "hostIP": NODE_IP, "podIP": f"10.42.0.{serial % 250}",
                           "startTime": started,
                           "containerStatuses": [{"name": c["name"], "ready": True, "restartCount": 0,
                                                  "state": {"running": {"startedAt": started}}}
                                                 for c in (template.get("spec") or {}).get("containers") or []]},
            }

    def _assign_node_port(self, namespace: str, name: str) -> None:
        service = self._live(SERVICES, namespace, name)
        if service is None or service.get("spec", {}).get("type") != "NodePort":
            return
        ports = [dict(port, nodePort=next(self._ports)) for port in service["spec"].get("ports") or []]
        self.objects[SERVICES, namespace, name].patch({"spec": {"ports": ports}})

    # -- what the kubelet serves -----------------------------------------------------------

    def _serve_log(self, request: kmock.Request) -> aiohttp.web.StreamResponse:
        if self._live(PODS, request.namespace, request.name) is None:
            return aiohttp.web.json_response({"kind": "Status", "code": 404, "reason": "NotFound"}, status=404)
        lines = list(self.pod_logs.get((request.namespace, request.name), []))
        if "sinceSeconds" in request.params:
            cutoff = datetime.now(UTC) - timedelta(seconds=int(request.params["sinceSeconds"]))
            lines = [(ts, text) for ts, text in lines if ts >= cutoff]
        if "tailLines" in request.params:
            lines = lines[-int(request.params["tailLines"]):] if int(request.params["tailLines"]) else []
        stamps = request.params.get("timestamps") in ("true", "True", "1")
        body = "".join(f"{ts.isoformat().replace('+00:00', 'Z')} {text}\n" if stamps else f"{text}\n"
                       for ts, text in lines)
        return aiohttp.web.Response(text=body, content_type="text/plain")


class RunningCluster:
    """A FleetCluster on a loopback port, served from its own event loop in a thread."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.cluster: FleetCluster | None = None
        self.url = ""
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._main, daemon=True, name="test-kmock")

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._serve())

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        async with FleetCluster() as cluster, Server(cluster) as server:
            self.cluster, self.url = cluster, str(server.url).rstrip("/")
            self._ready.set()
            await self._stop.wait()

    def start(self) -> RunningCluster:
        self._thread.start()
        assert self._ready.wait(15), "the Kubernetes emulator did not start"
        return self

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(15)
        if self.cluster is not None:
            self.cluster.kubelet.stop()

    def call(self, function, *args):
        """Run `function(*args)` on the emulator's loop (changes to its objects), and wait."""
        async def run():
            async with self.cluster._lock:
                return function(*args)
        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(10)

    # -- helpers for tests ----------------------------------------------------------------

    def kubeconfig(self, *, namespace: str = "agents", server: str | None = None) -> str:
        return kubeconfig_for(server or self.url, namespace=namespace)

    def live(self, resource: str, namespace: str, name: str) -> dict | None:
        key = (kmock.resource(resource), namespace, name)
        if key not in self.cluster.objects or self.cluster.objects[key].deleted:
            return None
        return self.cluster.objects[key].raw

    def storage_class(self, name: str, *, expandable: bool) -> None:
        """A StorageClass of the cluster (claims of it may grow only when it is expandable)."""
        body = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
                "provisioner": "test.fleet/disk", "allowVolumeExpansion": expandable}
        self.call(self.cluster.objects.__setitem__, (STORAGE_CLASSES, None, name), body)

    def schedule_on(self, node: str) -> None:
        """The scheduler places pods made from now on on `node` (another node of the cluster)."""
        self.call(setattr, self.cluster, "schedule_on", node)

    def pods(self, namespace: str) -> list[dict]:
        return [obj.raw for key, obj in list(self.cluster.objects.items())
                if key[0] == PODS and key[1] == namespace and not obj.deleted]

    def exec_into(self, namespace: str, pod: str) -> None:
        """Serve the pod's exec (commands run on this machine: tests/infra/kube_exec.py)."""
        self.call(self.cluster.exec_pods.add, (namespace, pod))

    def requests(self) -> list[kmock.Request]:
        return list(self.cluster._requests)

    def release(self, resource: str, namespace: str, name: str) -> None:
        """Remove an object's finalizers: a deletion it held up completes (as a controller does)."""
        self.call(self._release, kmock.resource(resource), namespace, name)

    def _release(self, resource, namespace, name) -> None:
        obj = self.cluster.objects[resource, namespace, name]
        if obj.deleted:
            return
        if obj.raw.get("metadata", {}).get("deletionTimestamp"):
            obj.delete()
            if resource == DEPLOYMENTS:
                self.cluster._reconcile(namespace, name)
        else:
            obj.patch({"metadata": {"finalizers": []}})


def kubeconfig_for(server: str, *, namespace: str = "agents", token: str | None = None) -> str:
    token = token or secrets.token_urlsafe(24)
    return (
        "apiVersion: v1\nkind: Config\n"
        f"clusters:\n- name: test\n  cluster:\n    server: {server}\n"
        f"users:\n- name: fleet\n  user:\n    token: {token}\n"
        f"contexts:\n- name: test\n  context:\n    cluster: test\n    user: fleet\n    namespace: {namespace}\n"
        "current-context: test\n"
    )


@pytest.fixture(scope="session")
def kube_cluster():
    """One emulated cluster for the session (loading its resource list takes a moment); tests
    tell their objects apart by agent id."""
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)  # one line per request otherwise
    running = RunningCluster().start()
    try:
        yield running
    finally:
        running.stop()
