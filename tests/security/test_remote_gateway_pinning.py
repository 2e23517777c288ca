"""The gateway of an agent on a Remote Docker host was reached at
the host's name, resolved again at connect time without the address check: a name checked at
registration could later answer 127.0.0.1 (DNS rebinding) and Fleet would send the agent's token
to its own loopback. The name is now resolved once per connection, checked with the host's one
rule (ssh_endpoint.host_addresses: the outbound rule and REMOTE_HOST_ALLOWED_NETWORKS), and the
checked address itself is what the endpoint dials."""

from __future__ import annotations

import pytest

from agents.gateway.endpoint import endpoint_for
from fleet.errors import DaemonUnreachable
from tests.factories.agents import AgentFactory
from tests.factories.remote_hosts import RemoteHostFactory
from tests.infra.dns import dns_answers

pytestmark = pytest.mark.django_db


@pytest.fixture
def dns(monkeypatch, settings):
    settings.OUTBOUND_ALLOWED_HOSTS = []  # loopback refused, as on a real server
    settings.PLATFORM_MODE = "selfhosted"
    return dns_answers(monkeypatch)


def _agent_on(host):
    return AgentFactory(execution_target_id=host.execution_target_id, deploy_target="remote-docker",
                        gateway_host_port=19555, gateway_token="t0ken-" + "x" * 40)


def test_the_checked_address_is_dialled_not_the_name_again(dns):
    host = RemoteHostFactory(host="lab.rebind.test")
    dns["lab.rebind.test"] = [["10.0.0.7"], ["127.0.0.1"]]  # checked once, then rebound to loopback

    endpoint = endpoint_for(_agent_on(host))

    assert (endpoint.host, endpoint.port) == ("10.0.0.7", 19555)
    assert endpoint.dial_addresses() == ["10.0.0.7"]  # no second lookup to be rebound
    assert endpoint.http_url("/health") == "http://10.0.0.7:19555/health"


@pytest.mark.parametrize("answer", [["127.0.0.1"], ["169.254.169.254"], ["10.0.0.7", "::1"]])
def test_a_host_name_that_now_answers_a_refused_address_is_not_reached(dns, answer):
    host = RemoteHostFactory(host="lab.rebind.test")
    dns["lab.rebind.test"] = [answer]

    with pytest.raises(DaemonUnreachable):
        endpoint_for(_agent_on(host))


def test_the_allowed_networks_hold_for_the_gateways_too(dns, settings):
    host = RemoteHostFactory(host="lab.rebind.test")
    dns["lab.rebind.test"] = [["192.168.9.9"]]
    settings.REMOTE_HOST_ALLOWED_NETWORKS = ["10.0.0.0/8"]

    with pytest.raises(DaemonUnreachable):
        endpoint_for(_agent_on(host))
