"""The Kubernetes backend through the official client against kmock's emulator on loopback
(tests/infra/kube.py): every object's spec, scaling, the redeploy's delete-wait-create order,
stats from the metrics API and the kubelet summary, logs, endpoints, and an unreachable cluster."""

from __future__ import annotations

import threading
import time
import types
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from agents.backends.base import BackendError, BackendUnreachable, WorkloadMissing
from agents.backends.kubernetes import KubernetesBackend
from tests.agents.backends.support import FakeAgent, spec_for
from tests.infra.kube import NODE, kubeconfig_for

NS = "agents"


def cluster(kube, **fields):
    values = {"name": "test", "kubeconfig": kube.kubeconfig(namespace=NS), "namespace": NS, "storage_class": "fast",
              "service_type": "NodePort", "gateway_host": ""}
    return types.SimpleNamespace(**{**values, **fields})


@pytest.fixture
def k8s(kube_cluster):
    return KubernetesBackend(cluster(kube_cluster))


def deploy(backend, **overrides):
    agent = FakeAgent(execution_target_id="k8s:test")
    env = {"OPENCLAW_GATEWAY_TOKEN": "gw-" + uuid.uuid4().hex, "OPENCLAW_GATEWAY_PORT": "18789",
           "FLEET_AGENT_ID": agent.id, "FLEET_USAGE_URL": f"http://fleet.test/api/agents/{agent.id}/usage",
           "FLEET_USAGE_TOKEN": "usage-" + uuid.uuid4().hex, "GITHUB_TOKEN": "ghp_" + uuid.uuid4().hex}
    spec = spec_for(agent, env=env, vcpu=1.5, ram_mb=2048, disk_gb=7, **overrides)
    placement = backend.create(agent, spec)
    return agent.place(placement), spec, placement


def test_create_makes_a_deployment_service_configmap_secret_and_claim_with_the_agents_spec(kube_cluster, k8s):
    agent, spec, placement = deploy(k8s)
    name = spec.name
    assert placement.container_id == f"{NS}/{name}" and placement.container_name == name
    assert placement.node == NODE and placement.host_port >= 30000

    deployment = kube_cluster.live("apps/v1/deployments", NS, name)
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    pod_spec = deployment["spec"]["template"]["spec"]
    container = pod_spec["containers"][0]
    assert container["image"] == spec.image
    assert container["resources"] == {"requests": {"cpu": "1500m", "memory": "2048Mi"},
                                      "limits": {"cpu": "1500m", "memory": "2048Mi"}}
    assert container["envFrom"] == [{"configMapRef": {"name": f"{name}-bootstrap"}},
                                    {"secretRef": {"name": f"{name}-secrets"}}]
    assert "env" not in container  # no variable is written into the pod spec itself
    assert pod_spec["automountServiceAccountToken"] is False
    assert {"name": "state", "persistentVolumeClaim": {"claimName": f"{name}-state"}} in pod_spec["volumes"]

    config_map = kube_cluster.live("v1/configmaps", NS, f"{name}-bootstrap")
    secret = kube_cluster.live("v1/secrets", NS, f"{name}-secrets")
    assert config_map["data"] == {"OPENCLAW_GATEWAY_PORT": "18789", "FLEET_AGENT_ID": agent.id,
                                  "FLEET_USAGE_URL": spec.env["FLEET_USAGE_URL"]}
    assert secret["stringData"] == {key: spec.env[key] for key in
                                    ("OPENCLAW_GATEWAY_TOKEN", "FLEET_USAGE_TOKEN", "GITHUB_TOKEN")}
    for value in secret["stringData"].values():
        assert value not in str(config_map) and value not in str(deployment)

    claim = kube_cluster.live("v1/persistentvolumeclaims", NS, f"{name}-state")
    assert claim["spec"]["resources"] == {"requests": {"storage": "7Gi"}}
    assert claim["spec"]["storageClassName"] == "fast"
    service = kube_cluster.live("v1/services", NS, name)
    assert service["spec"]["type"] == "NodePort"
    assert service["spec"]["selector"] == {"fleet.agent_id": agent.id}
    assert service["spec"]["ports"][0]["port"] == 18789
    for obj in (deployment, config_map, secret, claim, service, deployment["spec"]["template"]):
        assert obj["metadata"]["labels"]["fleet.agent_id"] == agent.id
        assert obj["metadata"]["labels"]["fleet.managed"] == "true"


def test_a_retried_create_finds_its_deployment_instead_of_making_a_second(kube_cluster, k8s):
    agent, spec, placement = deploy(k8s)
    before = len(kube_cluster.requests())
    assert k8s.create(agent, spec) == placement
    posts = [r for r in kube_cluster.requests()[before:] if r.method == "POST"]
    assert posts == []


def test_stop_scales_to_zero_and_start_back_to_one(kube_cluster, k8s):
    agent, spec, _ = deploy(k8s)
    k8s.stop(agent)
    assert kube_cluster.live("apps/v1/deployments", NS, spec.name)["spec"]["replicas"] == 0
    live = k8s.inspect(agent)
    assert live.exists and not live.running
    assert not [p for p in kube_cluster.pods(NS) if p["metadata"]["labels"]["fleet.agent_id"] == agent.id]
    k8s.start(agent)
    assert kube_cluster.live("apps/v1/deployments", NS, spec.name)["spec"]["replicas"] == 1
    assert k8s.inspect(agent).running


@pytest.fixture
def schedule_on(kube_cluster):
    """Have the cluster's scheduler place the next pods on another node (reset afterwards: the
    emulated cluster is the session's)."""
    yield kube_cluster.schedule_on
    kube_cluster.schedule_on(NODE)


def test_inspect_reads_the_node_of_the_current_pod_as_the_scheduler_moves_it(kube_cluster, k8s, schedule_on):
    agent, _, placement = deploy(k8s)
    assert placement.node == NODE and k8s.inspect(agent).node == NODE

    schedule_on("node-b")
    k8s.restart(agent)  # a new pod, which the scheduler places elsewhere

    assert k8s.inspect(agent).node == "node-b"
    k8s.stop(agent)
    assert k8s.inspect(agent).node is None  # scaled to zero: no pod, no node


def test_restart_replaces_the_pod(kube_cluster, k8s):
    agent, _, _ = deploy(k8s)
    mine = lambda: [p["metadata"]["name"] for p in kube_cluster.pods(NS)  # noqa: E731
                    if p["metadata"]["labels"]["fleet.agent_id"] == agent.id]
    before = mine()
    k8s.restart(agent)
    after = mine()
    assert len(after) == 1 and after != before


def test_redeploy_deletes_deployment_service_and_configmap_and_waits_for_them_before_creating(
        kube_cluster, k8s, settings):
    settings.K8S_DELETE_TIMEOUT_SECONDS = 10
    agent, spec, _ = deploy(k8s)
    # A finalizer holds the Deployment (as pods still terminating would) until it is released.
    kube_cluster.call(lambda: kube_cluster.cluster.objects["apps/v1/deployments", NS, spec.name].patch(
        {"metadata": {"finalizers": ["test/held"]}}))
    timer = threading.Timer(0.6, kube_cluster.release, ("apps/v1/deployments", NS, spec.name))
    timer.start()
    started = time.monotonic()
    k8s.remove(agent, keep_state=True)
    assert time.monotonic() - started >= 0.5  # remove waited for the Deployment to go
    for kind, name in (("apps/v1/deployments", spec.name), ("v1/services", spec.name),
                       ("v1/configmaps", f"{spec.name}-bootstrap")):
        assert kube_cluster.live(kind, NS, name) is None
    assert kube_cluster.live("v1/persistentvolumeclaims", NS, f"{spec.name}-state") is not None  # the state

    agent.container_id = agent.container_name = ""
    mark = len(kube_cluster.requests())
    placement = k8s.create(agent, spec)
    assert placement.container_id == f"{NS}/{spec.name}"
    calls = [(r.method, r.url.path.rsplit("/", 2)[-2 if r.method == "DELETE" else -1])
             for r in kube_cluster.requests()[mark:] if r.method in ("POST", "DELETE")]
    assert calls[-3:] == [("POST", "configmaps"), ("POST", "services"), ("POST", "deployments")]
    assert ("DELETE", "persistentvolumeclaims") not in calls  # the claim (the state) is kept


def redeploy_with_disk(k8s, agent, spec, disk_gb):
    """Remove keeping the state, then create the replacement with another disk_gb (a resource change)."""
    k8s.remove(agent, keep_state=True)
    agent.container_id = agent.container_name = ""
    return agent.place(k8s.create(agent, replace(spec, disk_gb=disk_gb)))


def claim_patches(kube_cluster, mark):
    return [r for r in kube_cluster.requests()[mark:]
            if r.method == "PATCH" and "/persistentvolumeclaims/" in r.url.path]


def test_a_redeploy_with_a_bigger_disk_grows_the_claim_and_never_shrinks_it(kube_cluster):
    kube_cluster.storage_class("expandable", expandable=True)
    k8s = KubernetesBackend(cluster(kube_cluster, storage_class="expandable"))
    agent, spec, _ = deploy(k8s)
    claim = lambda: kube_cluster.live("v1/persistentvolumeclaims", NS, f"{spec.name}-state")  # noqa: E731
    assert claim()["spec"]["resources"]["requests"]["storage"] == "7Gi"

    redeploy_with_disk(k8s, agent, spec, 12)
    assert claim()["spec"]["resources"]["requests"]["storage"] == "12Gi"

    mark = len(kube_cluster.requests())
    redeploy_with_disk(k8s, agent, spec, 12)  # the same size: nothing to ask
    redeploy_with_disk(k8s, agent, spec, 5)  # smaller: refused before it gets here; never asked for
    assert claim_patches(kube_cluster, mark) == []
    assert claim()["spec"]["resources"]["requests"]["storage"] == "12Gi"
    k8s.remove(agent)


def test_a_claim_whose_storage_class_cannot_expand_fails_the_create_saying_why(kube_cluster):
    kube_cluster.storage_class("fixed-size", expandable=False)
    k8s = KubernetesBackend(cluster(kube_cluster, storage_class="fixed-size"))
    agent, spec, _ = deploy(k8s)

    with pytest.raises(BackendError, match=r"refused to grow the agent's state claim from 7Gi to 9Gi \(its storage "
                                           r"class must allow volume expansion\): .*must support resize") as failed:
        redeploy_with_disk(k8s, agent, spec, 9)

    assert not failed.value.transient
    assert kube_cluster.live("v1/persistentvolumeclaims", NS, f"{spec.name}-state")["spec"]["resources"] == {
        "requests": {"storage": "7Gi"}}
    agent.container_id = f"{NS}/{spec.name}"  # what is left of it (its claim, its secret) goes
    k8s.remove(agent)
    assert kube_cluster.live("v1/persistentvolumeclaims", NS, f"{spec.name}-state") is None


def test_create_waits_for_a_previous_deployment_still_terminating(kube_cluster, k8s, settings):
    agent, spec, _ = deploy(k8s)
    kube_cluster.call(lambda: kube_cluster.cluster.objects["apps/v1/deployments", NS, spec.name].patch(
        {"metadata": {"finalizers": ["test/held"]}}))
    settings.K8S_DELETE_TIMEOUT_SECONDS = 0.3
    k8s.remove(agent, keep_state=True)  # gives up waiting: the Deployment is still terminating
    assert kube_cluster.live("apps/v1/deployments", NS, spec.name)["metadata"]["deletionTimestamp"]

    settings.K8S_DELETE_TIMEOUT_SECONDS = 10
    threading.Timer(0.6, kube_cluster.release, ("apps/v1/deployments", NS, spec.name)).start()
    started = time.monotonic()
    k8s.create(agent, spec)  # a POST before the old one is gone would be a 409
    assert time.monotonic() - started >= 0.5
    assert "deletionTimestamp" not in kube_cluster.live("apps/v1/deployments", NS, spec.name)["metadata"]


def test_create_gives_up_with_a_transient_error_when_the_previous_objects_never_go(kube_cluster, k8s, settings):
    agent, spec, _ = deploy(k8s)
    kube_cluster.call(lambda: kube_cluster.cluster.objects["v1/configmaps", NS, f"{spec.name}-bootstrap"].patch(
        {"metadata": {"finalizers": ["test/held"]}}))
    settings.K8S_DELETE_TIMEOUT_SECONDS = 0.3
    k8s.remove(agent, keep_state=True)
    with pytest.raises(BackendError, match="still being deleted") as caught:
        k8s.create(agent, spec)
    assert caught.value.transient
    kube_cluster.release("v1/configmaps", NS, f"{spec.name}-bootstrap")


def test_remove_without_keeping_state_deletes_the_secret_and_the_claim_too(kube_cluster, k8s):
    agent, spec, _ = deploy(k8s)
    k8s.remove(agent)
    for kind, name in (("v1/secrets", f"{spec.name}-secrets"), ("v1/persistentvolumeclaims", f"{spec.name}-state")):
        assert kube_cluster.live(kind, NS, name) is None
    assert not k8s.inspect(agent).exists
    k8s.remove(agent)  # removing what is gone is not an error
    k8s.stop(agent)
    with pytest.raises(WorkloadMissing):
        k8s.start(agent)


def test_stats_map_the_metrics_api_and_the_kubelet_summary(kube_cluster, k8s):
    agent, _, _ = deploy(k8s)
    pod = next(p for p in kube_cluster.pods(NS) if p["metadata"]["labels"]["fleet.agent_id"] == agent.id)
    pod_name = pod["metadata"]["name"]
    kube_cluster.call(kube_cluster.cluster.objects.__setitem__, ("metrics.k8s.io/v1beta1/pods", NS, pod_name), {
        "metadata": {"name": pod_name, "namespace": NS},
        "containers": [{"name": "runtime", "usage": {"cpu": "250000000n", "memory": "524288Ki"}}],
    })
    kube_cluster.cluster.summaries[NODE] = {"node": {"nodeName": NODE}, "pods": [{
        "podRef": {"name": pod_name, "namespace": NS},
        "network": {"interfaces": [{"name": "eth0", "rxBytes": 3 * 1024 * 1024, "txBytes": 1024 * 1024},
                                   {"name": "eth1", "rxBytes": 1024 * 1024, "txBytes": 0}]},
        "containers": [{"name": "runtime", "cpu": {"usageNanoCores": 900000000},
                        "memory": {"workingSetBytes": 1}}],
        "process_stats": {"process_count": 7},
    }]}
    stats = k8s.stats(agent)
    assert stats.running
    assert stats.cpu_percent == 25.0  # 250m of a core, from the metrics API (not the summary's 900m)
    assert stats.memory_usage_mb == 512.0 and stats.memory_limit_mb == 2048.0 and stats.memory_percent == 25.0
    assert (stats.network_rx_mb, stats.network_tx_mb) == (4.0, 1.0)
    assert (stats.disk_read_mb, stats.disk_write_mb) == (0.0, 0.0)  # no API gives a pod's block I/O
    assert stats.pids == 7
    assert stats.uptime_seconds >= 5

    kube_cluster.call(kube_cluster.cluster.objects.__delitem__, ("metrics.k8s.io/v1beta1/pods", NS, pod_name))
    fallback = k8s.stats(agent)  # no metrics-server: the summary's figures
    assert fallback.cpu_percent == 90.0 and fallback.memory_usage_mb == 0.0

    k8s.stop(agent)
    stopped = k8s.stats(agent)
    assert not stopped.running and stopped.cpu_percent == 0 and stopped.memory_limit_mb == 2048.0


def test_logs_come_from_the_pods_log_with_timestamps_tail_and_since(kube_cluster, k8s):
    agent, _, _ = deploy(k8s)
    pod = next(p for p in kube_cluster.pods(NS) if p["metadata"]["labels"]["fleet.agent_id"] == agent.id)
    now = datetime.now(UTC)
    kube_cluster.cluster.pod_logs[NS, pod["metadata"]["name"]] = [
        (now - timedelta(minutes=10), "booting"), (now - timedelta(seconds=30), "listening on 18789"),
        (now - timedelta(seconds=5), "ready"),
    ]
    lines = list(k8s.logs(agent, tail=2))
    assert [line.line for line in lines] == ["listening on 18789", "ready"]
    assert lines[0].stream == "stdout" and lines[0].ts.tzinfo is not None
    assert [line.line for line in k8s.logs(agent, tail=None, since=now - timedelta(minutes=1))] == [
        "listening on 18789", "ready"]
    request = [r for r in kube_cluster.requests() if r.url.path.endswith("/log")][-1]
    assert request.params["container"] == "runtime" and request.params["timestamps"] == "true"
    # Following streams the same lines (the emulator's log ends where a live one would wait).
    assert [line.line for line in k8s.logs(agent, tail=1, follow=True)] == ["ready"]
    assert [r for r in kube_cluster.requests() if r.url.path.endswith("/log")][-1].params["follow"] == "true"


def test_gateway_endpoint_follows_the_service_type_and_gateway_host(kube_cluster):
    node_port = KubernetesBackend(cluster(kube_cluster, service_type="NodePort", gateway_host="gw.example.net"))
    agent, _, placement = deploy(node_port)
    assert node_port.gateway_endpoint(agent) == ("gw.example.net", placement.host_port)
    assert KubernetesBackend(cluster(kube_cluster)).gateway_endpoint(agent) == ("10.0.0.11", placement.host_port)

    cluster_ip = KubernetesBackend(cluster(kube_cluster, service_type="ClusterIP"))
    agent, spec, placement = deploy(cluster_ip)
    assert placement.host_port == 18789
    assert cluster_ip.gateway_endpoint(agent) == (f"{spec.name}.{NS}.svc", 18789)


def test_an_unreachable_api_server_is_backend_unreachable():
    down = KubernetesBackend(types.SimpleNamespace(
        name="down", kubeconfig=kubeconfig_for("http://127.0.0.1:9"), namespace=NS, storage_class="",
        service_type="ClusterIP", gateway_host=""))
    agent = FakeAgent(container_id=f"{NS}/fleet-agent-000000000000")
    for call in (down.probe, lambda: down.inspect(agent), lambda: down.stop(agent), lambda: down.stats(agent),
                 lambda: down.create(agent, spec_for(agent))):
        with pytest.raises(BackendUnreachable):
            call()


def test_probe_reports_the_api_servers_version(k8s):
    assert k8s.probe() == "Kubernetes v1.26.4+k3s1"


def test_exec_goes_to_the_pod_exec_api_with_each_word_as_one_argument(kube_cluster, k8s):
    """kmock serves no exec WebSocket (no container runs behind its pods): the call is checked up
    to the API server, and the refused upgrade is a short BackendError."""
    agent, _, _ = deploy(k8s)
    with pytest.raises(BackendError, match="refused the request") as caught:
        k8s.exec(agent, ["sh", "-c", "echo $0", "two words"], timeout=5, max_output=100)
    assert len(str(caught.value)) < 400
    request = [r for r in kube_cluster.requests() if r.url.path.endswith("/exec")][-1]
    assert request.url.query.getall("command") == ["sh", "-c", "echo $0", "two words"]
    assert request.params["container"] == "runtime" and request.params["tty"] == "false"
    with pytest.raises(ValueError):
        k8s.read_state_file(agent, "../etc/passwd")  # never outside the state folder
