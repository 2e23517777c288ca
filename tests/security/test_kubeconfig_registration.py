"""POST /api/admin/k8s-clusters answered 500 for a kubeconfig whose sections
had the wrong shapes, and accepted any `server` and `proxy-url` (`proxy-url:
http://127.0.0.1:6379` was stored). Shapes are checked to 400 (naming `kubeconfig`) and both URLs
pass fleet.netsafety's outbound rule, on create and on PATCH."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from agents.targets.k8s_clusters import K8sCluster
from tests.factories.targets import make_cluster
from tests.infra.kube import kubeconfig_for
from tests.support import client_for

pytestmark = pytest.mark.django_db

URL = "/api/admin/k8s-clusters"
SERVER = "https://10.20.30.40:6443"  # a private-network API server: allowed when self-hosted


def _with(**changes) -> str:
    """A sound kubeconfig with top-level keys replaced, or {"cluster": {...}} merged in."""
    data = yaml.safe_load(kubeconfig_for(SERVER))
    data["clusters"][0]["cluster"].update(changes.pop("cluster", {}))
    data.update(changes)
    return yaml.safe_dump(data)


MALFORMED = {
    "users as a mapping": _with(users={"u": 1}),
    "clusters as strings": _with(clusters=["abc"]),
    "contexts as a string": _with(contexts="ctx"),
    "an entry without a name": _with(users=[{"user": {"token": "t" * 20}}]),
    "a cluster body that is a list": _with(clusters=[{"name": "test", "cluster": ["https://10.0.0.1"]}]),
    "a current context that is a number": _with(**{"current-context": 7}),
    "a current context naming nothing": _with(**{"current-context": "elsewhere"}),
    "a context naming an unknown cluster": _with(
        contexts=[{"name": "test", "context": {"cluster": "x", "user": "fleet"}}]),
    "a server that is a number": _with(cluster={"server": 6443}),
    "a list at the top": "- 1\n- 2\n",
}

REFUSED_URLS = {
    "proxy-url at loopback Redis": {"proxy-url": "http://127.0.0.1:6379"},
    "server at loopback": {"server": "https://127.0.0.1:6443"},
    "server at the metadata service": {"server": "http://169.254.169.254"},
    "server at IPv6 loopback": {"server": "https://[::1]:6443"},
    "proxy-url at link-local": {"proxy-url": "http://169.254.10.10:3128"},
    "a server that is not http": {"server": "file:///etc/passwd"},
    "a server with credentials": {"server": "https://user:pw@10.20.30.40:6443"},
}


@pytest.fixture
def admin(tenancy, settings):
    settings.OUTBOUND_ALLOWED_HOSTS = []  # loopback refused, as on a real server
    settings.PLATFORM_MODE = "selfhosted"
    return client_for(tenancy.platform_admin)


def _refused(answer) -> None:
    assert answer.status_code == 400, answer.content
    body = answer.json()
    assert body["code"] == "validation_error" and set(body["fields"]) == {"kubeconfig"}


@pytest.mark.parametrize("kubeconfig", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_kubeconfig_is_a_400_naming_it(admin, kubeconfig):
    _refused(admin.post(URL, {"name": "c", "kubeconfig": kubeconfig}, format="json"))
    assert not K8sCluster.objects.exists()


@pytest.mark.parametrize("cluster", REFUSED_URLS.values(), ids=REFUSED_URLS.keys())
def test_server_and_proxy_url_pass_the_outbound_rule(admin, cluster):
    _refused(admin.post(URL, {"name": "c", "kubeconfig": _with(cluster=cluster)}, format="json"))
    assert not K8sCluster.objects.exists()


def test_a_patch_is_checked_the_same_way(admin):
    cluster = make_cluster()
    before = cluster.kubeconfig
    _refused(admin.patch(f"{URL}/{cluster.pk}", {"kubeconfig": _with(cluster={"proxy-url": "http://127.0.0.1:6379"})},
                         format="json"))
    _refused(admin.patch(f"{URL}/{cluster.pk}", {"kubeconfig": _with(users={"u": 1})}, format="json"))
    cluster.refresh_from_db()
    assert cluster.kubeconfig == before


def test_private_networks_are_accepted_self_hosted_and_refused_in_paas(admin, settings):
    kubeconfig = _with(cluster={"proxy-url": "http://10.0.0.2:3128"})
    assert admin.post(URL, {"name": "lan", "kubeconfig": kubeconfig}, format="json").status_code == 201
    settings.PLATFORM_MODE = "paas"
    _refused(admin.post(URL, {"name": "lan2", "kubeconfig": kubeconfig}, format="json"))


def test_an_allow_listed_loopback_server_is_accepted(admin, settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]  # an operator with k3s on this host
    answer = admin.post(URL, {"name": "k3s", "kubeconfig": _with(cluster={"server": "https://127.0.0.1:6443"})},
                        format="json")
    assert answer.status_code == 201, answer.content


# Any YAML value in any section: the fuzz of the schema sends a platform admin's bodies only
# as far as the session it holds (a workspace admin's: 403), so the shapes are fuzzed here.
_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12))
_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                       max_leaves=8)
_sections = st.fixed_dictionaries({}, optional={
    "clusters": _values, "users": _values, "contexts": _values, "current-context": _values,
    "apiVersion": _values, "kind": _values,
})


@hypothesis_settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(changes=_sections)
def test_no_kubeconfig_shape_is_a_server_error(admin, changes):
    answer = admin.post(URL, {"name": "fuzz", "kubeconfig": _with(**changes)}, format="json")
    assert answer.status_code in (201, 400), answer.content
    if answer.status_code == 201:
        K8sCluster.objects.all().delete()
