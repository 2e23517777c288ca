import ipaddress

import pytest
import requests
from django.core.exceptions import ImproperlyConfigured

from fleet.netsafety import UnsafeTarget, check_host, check_url, parse_port_ranges, port_allowed, safe_session
from tests.infra.dns import dns_answers

from .loopback_http import LoopbackServer

PUBLIC_V4 = "93.184.216.34"  # literal addresses resolve without any DNS traffic
PUBLIC_V6 = "2606:4700:4700::1111"


@pytest.fixture(autouse=True)
def _nothing_allowed(settings):
    settings.OUTBOUND_ALLOWED_HOSTS = []
    settings.OUTBOUND_TIMEOUT_SECONDS = 10


@pytest.fixture(scope="module")
def server():
    with LoopbackServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    with LoopbackServer(tls_dir=tmp_path_factory.mktemp("tls")) as srv:
        yield srv


@pytest.fixture
def fake_dns(monkeypatch):
    """Answers for made-up names (tests.infra.dns); the rest is real."""
    return dns_answers(monkeypatch)


# --- check_host -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "localhost", "::1", "[::1]", "::ffff:127.0.0.1", "64:ff9b::7f00:1", "127.1.2.3"]
)
def test_it_refuses_loopback_by_default(host):
    with pytest.raises(UnsafeTarget, match="loopback"):
        check_host(host)


@pytest.mark.parametrize(
    "host, reason",
    [
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("100.64.0.1", "private"),
        ("fd12:3456::1", "private"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("192.0.2.10", "non-public"),
        ("198.18.0.1", "non-public"),
    ],
)
def test_it_refuses_every_non_public_address(host, reason):
    with pytest.raises(UnsafeTarget, match=reason):
        check_host(host)


@pytest.mark.parametrize(
    "host", ["169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200", "metadata.google.internal"]
)
def test_it_refuses_cloud_metadata_even_when_private_ranges_are_allowed(host):
    with pytest.raises(UnsafeTarget, match="metadata"):
        check_host(host, allow_private=True)


@pytest.mark.parametrize("host", ["10.1.2.3", "172.31.255.1", "192.168.0.10", "100.64.0.1", "fd12:3456::1"])
def test_allow_private_permits_private_network_ranges(host):
    assert check_host(host, 18789, allow_private=True) == [ipaddress.ip_address(host)]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "169.254.1.1", "fe80::1", "0.0.0.0", "224.0.0.1"])
def test_allow_private_never_permits_loopback_link_local_or_the_rest(host):
    with pytest.raises(UnsafeTarget):
        check_host(host, allow_private=True)


@pytest.mark.parametrize("host", [PUBLIC_V4, PUBLIC_V6])
def test_it_accepts_a_public_address(host):
    assert check_host(host, 443) == [ipaddress.ip_address(host)]


def test_an_allowed_host_name_exempts_that_name_only(settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["LocalHost."]
    assert check_host("localhost") == [ipaddress.ip_address("127.0.0.1")]
    with pytest.raises(UnsafeTarget):
        check_host("127.0.0.1")


def test_an_allowed_cidr_exempts_the_addresses_in_it(settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.0/8", "169.254.169.254"]
    assert check_host("127.0.0.1") == [ipaddress.ip_address("127.0.0.1")]
    assert check_host("localhost") == [ipaddress.ip_address("127.0.0.1")]
    assert check_host("169.254.169.254")
    with pytest.raises(UnsafeTarget):
        check_host("10.0.0.1")


def test_a_wildcard_entry_exempts_subdomains_only(settings, fake_dns):
    settings.OUTBOUND_ALLOWED_HOSTS = ["*.corp.test"]
    fake_dns["hooks.corp.test"] = [["10.0.0.5"]]
    fake_dns["corp.test.evil"] = [["10.0.0.5"]]
    assert check_host("hooks.corp.test") == [ipaddress.ip_address("10.0.0.5")]
    with pytest.raises(UnsafeTarget):
        check_host("corp.test.evil")


def test_a_name_with_one_public_and_one_loopback_address_is_refused(fake_dns):
    fake_dns["mixed.test"] = [[PUBLIC_V4, "127.0.0.1"]]
    with pytest.raises(UnsafeTarget, match="127.0.0.1"):
        check_host("mixed.test")


def test_an_unresolvable_host_is_refused(fake_dns):
    fake_dns["nowhere.test"] = [[]]
    with pytest.raises(UnsafeTarget, match="could not be resolved"):
        check_host("nowhere.test")


@pytest.mark.parametrize("port", [0, 65536, -1, "http", None.__class__])
def test_a_bad_port_is_refused(port):
    with pytest.raises(UnsafeTarget, match="port"):
        check_host(PUBLIC_V4, port)


@pytest.mark.parametrize("host", ["", "   ", None])
def test_a_missing_host_is_refused(host):
    with pytest.raises(UnsafeTarget):
        check_host(host)


# --- check_url --------------------------------------------------------------------------


def test_check_url_returns_the_split_url_of_a_public_target():
    parts = check_url(f"https://{PUBLIC_V4}:8443/hook?x=1")
    assert (parts.scheme, parts.hostname, parts.port, parts.path) == ("https", PUBLIC_V4, 8443, "/hook")


@pytest.mark.parametrize(
    "url, message",
    [
        ("ftp://93.184.216.34/x", "http and https"),
        ("file:///etc/passwd", "http and https"),
        ("javascript:alert(1)", "http and https"),
        ("http:///path", "needs a host"),
        ("http://user:pw@93.184.216.34/", "credentials"),
        ("http://user@93.184.216.34/", "credentials"),
        ("http://93.184.216.34:99999/", "malformed"),
        ("http://93.184.216.34/a b", "spaces"),
        ("http://127.0.0.1:8080/", "loopback"),
        ("http://[::1]/", "loopback"),
        ("http://169.254.169.254/latest/meta-data", "metadata"),
        ("", "required"),
    ],
)
def test_check_url_refuses_unsafe_urls(url, message):
    with pytest.raises(UnsafeTarget, match=message):
        check_url(url)


def test_check_url_passes_allow_private_through():
    assert check_url("http://10.0.0.8:18789/", allow_private=True).hostname == "10.0.0.8"
    with pytest.raises(UnsafeTarget):
        check_url("http://10.0.0.8:18789/")


# --- safe_session against real servers on 127.0.0.1 -------------------------------------


def test_the_session_refuses_a_loopback_server_by_default(server):
    before = len(server.paths)
    with pytest.raises(UnsafeTarget):
        safe_session().get(server.url("/ok"))
    with pytest.raises(UnsafeTarget):
        safe_session(allow_private=True).get(server.url("/ok", host="localhost"))
    assert len(server.paths) == before


@pytest.mark.parametrize("allowed", [["localhost"], ["127.0.0.1"], ["127.0.0.0/8"]])
def test_the_session_reaches_a_server_exempted_by_outbound_allowed_hosts(server, settings, allowed):
    settings.OUTBOUND_ALLOWED_HOSTS = allowed
    response = safe_session().get(server.url("/ok", host="localhost" if allowed == ["localhost"] else "127.0.0.1"))
    assert (response.status_code, response.text) == (200, "ok")


def test_a_redirect_to_a_loopback_target_is_refused(server, settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["localhost"]  # the name, not the address behind it
    target = server.url("/ok?via=redirect")
    with pytest.raises(UnsafeTarget, match="loopback"):
        safe_session().get(server.url(f"/redirect?to={target}", host="localhost"))
    assert "/ok?via=redirect" not in server.paths


def test_a_redirect_to_a_url_with_credentials_is_refused(server, settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    target = f"http://user:pw@127.0.0.1:{server.port}/ok"
    with pytest.raises(UnsafeTarget, match="credentials"):
        safe_session().get(server.url(f"/redirect?to={target}"))


def test_the_session_follows_at_most_three_redirects(server, settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    assert safe_session().get(server.url("/chain/3")).text == "end"
    with pytest.raises(requests.TooManyRedirects):
        safe_session().get(server.url("/chain/4"))


def test_the_session_times_out_by_default(server, settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.OUTBOUND_TIMEOUT_SECONDS = 0.3
    with pytest.raises(requests.Timeout):
        safe_session().get(server.url("/slow?s=2"))


def test_an_explicit_timeout_overrides_the_default(server, settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.OUTBOUND_TIMEOUT_SECONDS = 0.1
    assert safe_session().get(server.url("/slow?s=0.3"), timeout=5).text == "late"


def test_dns_rebinding_after_the_check_is_refused_at_connect_time(server, fake_dns):
    # The name looked public when saved, then resolves to loopback when the request is sent.
    fake_dns["rebind.test"] = [[PUBLIC_V4], ["127.0.0.1"]]
    check_url(f"http://rebind.test:{server.port}/ok")
    before = len(server.paths)
    with pytest.raises(UnsafeTarget, match="127.0.0.1"):
        safe_session().get(f"http://rebind.test:{server.port}/ok")
    assert len(server.paths) == before


def test_tls_keeps_the_host_name_for_sni_certificate_and_host_header(tls_server, settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["localhost"]
    response = safe_session().get(tls_server.url("/host", host="localhost"), verify=tls_server.cafile)
    assert response.text == f"localhost:{tls_server.port}"


def test_tls_still_verifies_the_certificate(tls_server, settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]  # the cert names localhost, not the IP
    with pytest.raises(requests.exceptions.SSLError):
        safe_session().get(tls_server.url("/host"), verify=tls_server.cafile)


def test_an_operator_ca_bundle_from_the_environment_is_honoured(tls_server, settings, monkeypatch):
    settings.OUTBOUND_ALLOWED_HOSTS = ["localhost"]
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", tls_server.cafile)
    assert safe_session().get(tls_server.url("/host", host="localhost")).status_code == 200


def test_explicit_proxies_are_refused(server, settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    with pytest.raises(UnsafeTarget, match="Proxies"):
        safe_session().get(server.url("/ok"), proxies={"http": "http://127.0.0.1:9"})


def test_environment_proxies_are_ignored(server, settings, monkeypatch):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    assert safe_session().get(server.url("/ok")).text == "ok"


# --- gateway ports ----------------------------------------------------------------------


def test_parse_port_ranges_reads_single_ports_and_ranges():
    assert parse_port_ranges("18789, 9119,19000-19999,") == ((18789, 18789), (9119, 9119), (19000, 19999))


@pytest.mark.parametrize("spec", ["abc", "0", "70000", "20-10", "1-2-3", "19000-"])
def test_parse_port_ranges_refuses_malformed_specs(spec):
    with pytest.raises(ValueError):
        parse_port_ranges(spec)


def test_port_allowed_follows_the_gateway_allowed_ports_setting(settings):
    settings.GATEWAY_ALLOWED_PORTS = "18789,9119,19000-19999,30000-32767"
    assert [port_allowed(p) for p in (18789, 9119, 19000, 19999, 30000, 32767)] == [True] * 6
    assert [port_allowed(p) for p in (80, 18790, 20000, 32768, "x", None)] == [False] * 6
    assert port_allowed(8080, "8080") is True


def test_port_allowed_reports_a_broken_setting_clearly(settings):
    settings.GATEWAY_ALLOWED_PORTS = "18789,nope"
    with pytest.raises(ImproperlyConfigured, match="GATEWAY_ALLOWED_PORTS"):
        port_allowed(18789)
