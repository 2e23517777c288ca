"""Agents on a registered cluster through the API: deploy needs a grant (the one selector),
provisioning creates the workload on the cluster (kmock), the lists show the placement,
lifecycle scales, and an unreachable cluster answers 502 daemon_unreachable."""

from __future__ import annotations

import html

import pytest
from django.test import Client

from agents.models import Agent, Status
from agents.services.monitoring import agents_monitor
from agents.targets.grants import GrantSet, target_grants_set
from tests.factories.targets import make_cluster
from tests.infra.kube import NODE
from tests.infra.provisioning import provision_to_end
from tests.support import client_for

pytestmark = pytest.mark.django_db

NS = "agents"


@pytest.fixture
def cluster(kube_cluster):
    # NodePort on 127.0.0.1: the gateway Fleet waits for is on loopback, where nothing answers.
    return make_cluster(server=kube_cluster.url, service_type="NodePort", gateway_host="127.0.0.1")


def grant_workspace(cluster, workspace):
    target_grants_set(execution_target_id=cluster.execution_target_id, grants=GrantSet(workspaces=(workspace.id,)))


def deploy(client, cluster, **fields):
    return client.post("/api/agents/deploy", {"execution_target_id": cluster.execution_target_id, "disk_gb": 3,
                                              **fields}, format="json")


def test_a_granted_editor_deploys_onto_the_cluster_and_the_lists_show_where(tenancy, cluster):
    grant_workspace(cluster, tenancy.workspace)
    answer = deploy(client_for(tenancy.editor), cluster, name="on-k8s")
    assert answer.status_code == 201, answer.content
    agent = answer.json()
    assert agent["status"] == "queued" and agent["deploy_target"] == "k8s"
    assert agent["execution_target_id"] == cluster.execution_target_id and agent["disk_gb"] == 3

    row = next(r for r in client_for(tenancy.editor).get("/api/agents").json() if r["id"] == agent["id"])
    assert (row["deploy_target"], row["execution_target_id"]) == ("k8s", cluster.execution_target_id)
    detail = client_for(tenancy.editor).get(f"/api/agents/{agent['id']}").json()
    assert (detail["deploy_target"], detail["execution_target_id"]) == ("k8s", cluster.execution_target_id)


def test_a_key_with_agents_write_deploys_into_its_granted_workspace(tenancy, cluster):
    grant_workspace(cluster, tenancy.workspace)
    answer = deploy(tenancy.client("key:agents:write"), cluster)
    assert answer.status_code == 201, answer.content
    assert Agent.objects.get(pk=answer.json()["id"]).assignments.filter(workspace=tenancy.workspace).exists()


@pytest.mark.parametrize("caller", ["viewer", "outsider", "editor"])
def test_without_a_grant_reaching_the_caller_the_cluster_is_a_400(tenancy, cluster, caller):
    if caller != "editor":  # the editor: no grant at all; the others: a grant they are below or outside
        grant_workspace(cluster, tenancy.workspace)
    answer = deploy(client_for(getattr(tenancy, caller)), cluster)
    assert answer.status_code == 400 and "execution_target_id" in answer.json()["fields"]
    assert not Agent.objects.filter(deploy_target="k8s").exists()


def test_an_unknown_cluster_is_a_400(tenancy):
    answer = client_for(tenancy.platform_admin).post(
        "/api/agents/deploy", {"execution_target_id": "k8s:00000000-0000-0000-0000-000000000000"}, format="json")
    assert answer.status_code == 400 and "execution_target_id" in answer.json()["fields"]


def test_provisioning_creates_the_workload_and_lifecycle_scales_it(tenancy, cluster, kube_cluster, settings):
    settings.AGENT_READY_TIMEOUT_SECONDS = 1
    grant_workspace(cluster, tenancy.workspace)
    editor = client_for(tenancy.editor)
    agent_id = deploy(editor, cluster, vcpu=2, ram_mb=1024).json()["id"]

    provision_to_end(agent_id=agent_id)  # the provisioning job's body, as the worker runs it

    agent = Agent.objects.get(pk=agent_id)
    name = agent.container_name
    assert agent.container_id == f"{NS}/{name}" and agent.node == "node-a" and agent.gateway_host_port >= 30000
    deployment = kube_cluster.live("apps/v1/deployments", NS, name)
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == settings.AGENT_IMAGE_OPENCLAW
    assert container["resources"]["limits"] == {"cpu": "2000m", "memory": "1024Mi"}
    secret = kube_cluster.live("v1/secrets", NS, f"{name}-secrets")["stringData"]
    config = kube_cluster.live("v1/configmaps", NS, f"{name}-bootstrap")["data"]
    assert secret["OPENCLAW_GATEWAY_TOKEN"] == agent.gateway_token and "FLEET_USAGE_TOKEN" in secret
    assert config["FLEET_AGENT_ID"] == agent_id and "OPENCLAW_GATEWAY_TOKEN" not in config
    assert kube_cluster.live("v1/persistentvolumeclaims", NS, f"{name}-state")["spec"]["resources"] == {
        "requests": {"storage": "3Gi"}}
    # No runtime answers behind the emulator's pod: the deploy ends in error, saying why.
    assert agent.status == Status.ERROR and "did not become ready" in agent.last_error

    assert editor.post(f"/api/agents/{agent_id}/stop").json()["status"] == "stopped"
    assert kube_cluster.live("apps/v1/deployments", NS, name)["spec"]["replicas"] == 0
    assert editor.post(f"/api/agents/{agent_id}/start").json()["status"] == "running"
    assert kube_cluster.live("apps/v1/deployments", NS, name)["spec"]["replicas"] == 1
    stats = editor.get(f"/api/agents/{agent_id}/stats")
    assert stats.status_code == 200 and stats.json()["memory_limit_mb"] == 1024 and stats.json()["running"] is True

    editor.post(f"/api/agents/{agent_id}/stop")
    redeployed = editor.post(f"/api/agents/{agent_id}/redeploy")
    assert redeployed.status_code == 200 and redeployed.json()["status"] == "queued"
    assert kube_cluster.live("apps/v1/deployments", NS, name) is None  # deleted before the replacement
    assert kube_cluster.live("v1/persistentvolumeclaims", NS, f"{name}-state") is not None

    provision_to_end(agent_id=agent_id)  # the replacement (it ends in error again: no runtime answers)
    assert kube_cluster.live("apps/v1/deployments", NS, name) is not None
    assert editor.delete(f"/api/agents/{agent_id}").json() == {"success": True}
    for kind, obj in (("apps/v1/deployments", name), ("v1/secrets", f"{name}-secrets"),
                      ("v1/persistentvolumeclaims", f"{name}-state")):
        assert kube_cluster.live(kind, NS, obj) is None


def test_an_unreachable_cluster_answers_502_daemon_unreachable(tenancy):
    cluster = make_cluster()  # its API server's port is closed
    agent = tenancy.agent(deploy_target="k8s", execution_target_id=cluster.execution_target_id,
                          status=Status.RUNNING, container_id=f"{NS}/fleet-agent-0123456789ab")
    viewer = client_for(tenancy.viewer)
    for answer in (viewer.get(f"/api/agents/{agent.id}/stats"), viewer.get(f"/api/agents/{agent.id}/gateway-url"),
                   client_for(tenancy.editor).post(f"/api/agents/{agent.id}/restart")):
        assert answer.status_code == 502 and answer.json()["code"] == "daemon_unreachable"


@pytest.mark.django_db(transaction=True)  # the monitoring sweep reads the agents' targets from its threads
def test_the_node_follows_the_pod_when_the_cluster_reschedules_it(tenancy, cluster, kube_cluster, settings):
    """`node` is read at create and again wherever the live state is reconciled: the monitoring
    sweep and GET /agents/:id store the node of the agent's current pod."""
    settings.AGENT_READY_TIMEOUT_SECONDS = 1
    grant_workspace(cluster, tenancy.workspace)
    editor = client_for(tenancy.editor)
    agent_id = deploy(editor, cluster).json()["id"]
    provision_to_end(agent_id=agent_id)
    assert Agent.objects.get(pk=agent_id).node == NODE
    assert editor.post(f"/api/agents/{agent_id}/start").json()["status"] == "running"
    try:
        kube_cluster.schedule_on("node-b")
        editor.post(f"/api/agents/{agent_id}/restart")  # a new pod, placed elsewhere by the scheduler
        assert agents_monitor()["unknown"] == 0
        assert Agent.objects.get(pk=agent_id).node == "node-b"

        kube_cluster.schedule_on("node-c")
        editor.post(f"/api/agents/{agent_id}/restart")
        detail = editor.get(f"/api/agents/{agent_id}").json()
        assert detail["node"] == "node-c" and Agent.objects.get(pk=agent_id).node == "node-c"
    finally:
        kube_cluster.schedule_on(NODE)
    editor.delete(f"/api/agents/{agent_id}")


def test_changing_the_disk_in_the_console_grows_the_claim_and_refuses_to_shrink_it(tenancy, kube_cluster, settings):
    settings.AGENT_READY_TIMEOUT_SECONDS = 1
    kube_cluster.storage_class("grows", expandable=True)
    cluster = make_cluster(server=kube_cluster.url, service_type="NodePort", gateway_host="127.0.0.1",
                           storage_class="grows")
    console = Client()
    console.force_login(tenancy.platform_admin)
    agent_id = deploy(client_for(tenancy.platform_admin), cluster, disk_gb=4).json()["id"]
    provision_to_end(agent_id=agent_id)  # ends in error: no runtime answers behind the emulator's pod
    claim_name = f"{Agent.objects.get(pk=agent_id).container_name}-state"
    storage = lambda: kube_cluster.live("v1/persistentvolumeclaims", NS, claim_name)["spec"]["resources"]  # noqa: E731
    resources = f"/admin/agents/agent/{agent_id}/resources/"

    grown = console.post(resources, {"vcpu": 1, "ram_mb": 1024, "disk_gb": 9, "sandbox_profile": "standard"})
    assert grown.status_code == 302
    provision_to_end(agent_id=agent_id)  # the redeploy's job: the kept claim is grown, not recreated
    assert storage() == {"requests": {"storage": "9Gi"}} and Agent.objects.get(pk=agent_id).disk_gb == 9

    refused = console.post(resources, {"vcpu": 1, "ram_mb": 2048, "disk_gb": 5, "sandbox_profile": "standard"})
    assert refused.status_code == 200
    assert ("The disk cannot shrink from 9 GB to 5 GB: a Kubernetes volume claim can grow but never shrink."
            in html.unescape(refused.content.decode()))
    agent = Agent.objects.get(pk=agent_id)
    assert (agent.disk_gb, agent.ram_mb, agent.status) == (9, 1024, Status.ERROR)  # nothing changed
    assert storage() == {"requests": {"storage": "9Gi"}}
    client_for(tenancy.platform_admin).delete(f"/api/agents/{agent_id}")

