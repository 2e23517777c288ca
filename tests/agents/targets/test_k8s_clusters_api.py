"""/api/admin/k8s-clusters and the admin console: platform admins register, edit, test and
remove clusters; the kubeconfig is stored encrypted and never shown anywhere."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client

from agents.targets.k8s_clusters import K8sCluster
from tests.factories.agents import AgentFactory
from tests.factories.targets import CLOSED_PORT_SERVER, make_cluster
from tests.infra.kube import kubeconfig_for
from tests.support import client_for

pytestmark = pytest.mark.django_db

URL = "/api/admin/k8s-clusters"
TOKEN = "kubeconfig-token-0123456789abcdef"


@pytest.fixture(autouse=True)
def _loopback_clusters_allowed(settings):
    """The emulator and the closed port are on loopback, which a kubeconfig's server may not be
    unless allow-listed (tests/security/test_kubeconfig_registration.py checks the refusal)."""
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]


def body(kube_cluster=None, **fields):
    server = kube_cluster.url if kube_cluster else CLOSED_PORT_SERVER
    return {"name": "prod", "kubeconfig": kubeconfig_for(server, token=TOKEN), "namespace": "agents",
            "storageClass": "fast", "serviceType": "NodePort", "gatewayHost": "nodes.example.net", **fields}


def test_a_platform_admin_registers_lists_edits_and_removes_a_cluster(tenancy):
    admin = client_for(tenancy.platform_admin)
    created = admin.post(URL, body(grants={"workspaces": [str(tenancy.workspace.id)]}), format="json")
    assert created.status_code == 201, created.content
    cluster = created.json()
    assert cluster["name"] == "prod" and cluster["namespace"] == "agents" and cluster["serviceType"] == "NodePort"
    assert cluster["status"] == "untested" and cluster["lastTestedAt"] is None
    assert cluster["executionTargetId"] == f"k8s:{cluster['id']}"
    assert cluster["grants"]["workspaces"] == [str(tenancy.workspace.id)]
    assert "kubeconfig" not in cluster

    listed = admin.get(URL).json()
    assert [c["id"] for c in listed] == [cluster["id"]]
    changed = admin.patch(f"{URL}/{cluster['id']}", {"gatewayHost": "10.1.2.3", "grants": {"allAccounts": True}},
                          format="json").json()
    assert changed["gatewayHost"] == "10.1.2.3" and changed["grants"]["allAccounts"] is True
    assert changed["grants"]["workspaces"] == [str(tenancy.workspace.id)]  # untouched part stays
    assert admin.get(f"{URL}/{cluster['id']}").json()["gatewayHost"] == "10.1.2.3"

    assert admin.delete(f"{URL}/{cluster['id']}").json() == {"success": True}
    assert admin.get(f"{URL}/{cluster['id']}").status_code == 404
    from agents.targets.models import TargetGrant
    assert not TargetGrant.objects.filter(execution_target_id=cluster["executionTargetId"]).exists()


def test_the_kubeconfig_is_encrypted_at_rest_and_in_no_answer(tenancy):
    admin = client_for(tenancy.platform_admin)
    created = admin.post(URL, body(), format="json")
    answers = [created, admin.get(URL), admin.get(f"{URL}/{created.json()['id']}"),
               admin.patch(f"{URL}/{created.json()['id']}", {"namespace": "other"}, format="json"),
               admin.post(f"{URL}/{created.json()['id']}/test")]
    for answer in answers:
        assert TOKEN not in answer.content.decode()
    with connection.cursor() as cursor:
        cursor.execute("SELECT kubeconfig FROM targets_k8scluster")
        stored = cursor.fetchone()[0]
    assert TOKEN not in stored and "server:" not in stored
    assert TOKEN in K8sCluster.objects.get().kubeconfig


@pytest.mark.parametrize(("fields", "field"), [
    ({"kubeconfig": "clusters: [unclosed"}, "kubeconfig"),
    ({"kubeconfig": "just a string"}, "kubeconfig"),
    ({"kubeconfig": kubeconfig_for(CLOSED_PORT_SERVER).replace("    token:", "    tokenFile: /etc/x\n    token:")},
     "kubeconfig"),
    ({"kubeconfig": kubeconfig_for(CLOSED_PORT_SERVER).replace(
        "    token: ", "    exec: {command: /bin/sh}\n    x: ")}, "kubeconfig"),
    ({"namespace": "Not_A_Namespace"}, "namespace"),
    ({"serviceType": "LoadBalancer"}, "serviceType"),
    ({"gatewayHost": "http://nodes.example.net"}, "gatewayHost"),
    ({"storageClass": "Fast SSD"}, "storageClass"),
    ({"name": ""}, "name"),
    ({"grants": {"users": ["not-a-uuid"]}}, "grants.users"),
])
def test_bad_fields_are_a_400_naming_the_field_and_nothing_is_stored(tenancy, fields, field):
    answer = client_for(tenancy.platform_admin).post(URL, body(**fields), format="json")
    assert answer.status_code == 400, answer.content
    assert answer.json()["code"] == "validation_error" and field in answer.json()["fields"]
    assert not K8sCluster.objects.exists()


def test_a_second_cluster_with_the_same_name_is_refused(tenancy):
    admin = client_for(tenancy.platform_admin)
    admin.post(URL, body(), format="json")
    answer = admin.post(URL, body(name="PROD"), format="json")
    assert answer.status_code == 400 and "name" in answer.json()["fields"]


def test_an_unknown_cluster_is_a_404(tenancy):
    admin = client_for(tenancy.platform_admin)
    missing = "00000000-0000-0000-0000-000000000000"
    for answer in (admin.get(f"{URL}/{missing}"), admin.patch(f"{URL}/{missing}", {}, format="json"),
                   admin.delete(f"{URL}/{missing}"), admin.post(f"{URL}/{missing}/test")):
        assert answer.status_code == 404 and answer.json()["code"] == "not_found"


def test_test_reaches_the_api_server_and_records_its_version(tenancy, kube_cluster):
    admin = client_for(tenancy.platform_admin)
    cluster = admin.post(URL, body(kube_cluster), format="json").json()
    result = admin.post(f"{URL}/{cluster['id']}/test").json()
    assert result == {"ok": True, "status": "ready", "version": "v1.26.4+k3s1", "error": None}
    shown = admin.get(f"{URL}/{cluster['id']}").json()
    assert shown["status"] == "ready" and shown["version"] == "v1.26.4+k3s1" and shown["lastTestedAt"]

    # A new kubeconfig says nothing about the old test: untested again.
    again = admin.patch(f"{URL}/{cluster['id']}", {"kubeconfig": kubeconfig_for(CLOSED_PORT_SERVER)}, format="json")
    assert again.json()["status"] == "untested" and again.json()["version"] == ""
    failed = admin.post(f"{URL}/{cluster['id']}/test").json()
    assert failed["ok"] is False and failed["status"] == "failed" and "cannot be reached" in failed["error"]
    assert admin.get(f"{URL}/{cluster['id']}").json()["lastError"] == failed["error"]


def test_a_cluster_with_agents_cannot_be_removed(tenancy):
    cluster = make_cluster()
    AgentFactory(owner=tenancy.owner, deploy_target="k8s", execution_target_id=cluster.execution_target_id)
    answer = client_for(tenancy.platform_admin).delete(f"{URL}/{cluster.id}")
    assert answer.status_code == 409 and answer.json()["code"] == "conflict"
    assert K8sCluster.objects.filter(pk=cluster.pk).exists()


@pytest.mark.parametrize("caller", ["owner", "admin", "outsider", "key:agents:read,agents:write", "anonymous"])
def test_only_a_platform_admins_session_manages_clusters(tenancy, caller):
    cluster = make_cluster()
    client = tenancy.client(caller)
    expected, code = {"anonymous": (401, "not_authenticated")}.get(caller, (403, "permission_denied"))
    if caller.startswith("key:"):
        code = "session_required"
    for answer in (client.get(URL), client.post(URL, body(), format="json"), client.get(f"{URL}/{cluster.id}"),
                   client.patch(f"{URL}/{cluster.id}", {"name": "x"}, format="json"),
                   client.delete(f"{URL}/{cluster.id}"), client.post(f"{URL}/{cluster.id}/test")):
        assert (answer.status_code, answer.json()["code"]) == (expected, code)
    assert K8sCluster.objects.get().name == cluster.name


# -- the admin console -----------------------------------------------------------------------


@pytest.fixture
def console(tenancy):
    client = Client()
    client.force_login(tenancy.platform_admin)
    return client


def test_the_console_lists_clusters_with_their_status_and_never_shows_the_kubeconfig(console):
    cluster = make_cluster(name="edge", server="http://127.0.0.1:9")
    listing = console.get("/admin/targets/k8scluster/").content.decode()
    assert "edge" in listing and "untested" in listing
    page = console.get(f"/admin/targets/k8scluster/{cluster.pk}/change/").content.decode()
    assert "edge" in page and "127.0.0.1:9" not in page and "token:" not in page


def test_the_console_registers_a_cluster_through_the_service_and_tests_it(console, kube_cluster):
    answer = console.post("/admin/targets/k8scluster/add/", {
        "name": "lab", "namespace": "agents", "storage_class": "", "service_type": "ClusterIP", "gateway_host": "",
        "kubeconfig_text": kubeconfig_for(kube_cluster.url, token=TOKEN)})
    assert answer.status_code == 302, answer.content.decode()[:2000]
    cluster = K8sCluster.objects.get(name="lab")
    assert TOKEN in cluster.kubeconfig

    edited = console.post(f"/admin/targets/k8scluster/{cluster.pk}/change/", {
        "name": "lab", "namespace": "agents2", "storage_class": "", "service_type": "ClusterIP", "gateway_host": "",
        "kubeconfig_text": ""})
    assert edited.status_code == 302
    cluster.refresh_from_db()
    assert cluster.namespace == "agents2" and TOKEN in cluster.kubeconfig  # empty keeps the stored one

    console.post("/admin/targets/k8scluster/", {"action": "test_clusters", "_selected_action": [str(cluster.pk)]})
    cluster.refresh_from_db()
    assert cluster.status == "ready" and cluster.version == "v1.26.4+k3s1"


def test_the_console_refuses_a_bad_kubeconfig_with_a_form_error(console):
    answer = console.post("/admin/targets/k8scluster/add/", {
        "name": "bad", "namespace": "agents", "storage_class": "", "service_type": "ClusterIP", "gateway_host": "",
        "kubeconfig_text": "clusters: [unclosed"})
    assert answer.status_code == 200 and "not valid YAML" in answer.content.decode()
    assert not K8sCluster.objects.exists()
