"""gateway_for: which agents it serves, where it reaches them, and how its errors read over HTTP."""

from __future__ import annotations

import secrets

import pytest

from agents.gateway import (
    IMPLEMENTATIONS,
    AgentNotRunning,
    GatewayAuthRefused,
    GatewayError,
    GatewayUnreachable,
    GatewayUnsupported,
    HermesGateway,
    OpenClawGateway,
    gateway_for,
    gateway_readiness,
)
from fleet.api.errors import status_of
from fleet.errors import DaemonUnreachable
from tests.factories.agents import AgentFactory

pytestmark = pytest.mark.django_db


def _adopted(url: str, *, family: str = "hermes", token: str | None = None, **fields):
    return AgentFactory(
        runtime_family=family, is_external=True, deploy_target="external", execution_target_id="external",
        container_id="", gateway_url=url, gateway_token=token or secrets.token_urlsafe(32), **fields,
    )


def test_one_implementation_per_family():
    assert {"openclaw": OpenClawGateway, "hermes": HermesGateway} == IMPLEMENTATIONS
    assert isinstance(gateway_for(AgentFactory(runtime_family="hermes", gateway_token="t" * 43)), HermesGateway)


@pytest.mark.parametrize("status", ["stopped", "error", "queued", "deploying"])
def test_an_agent_that_is_not_running_has_no_gateway(status):
    agent = AgentFactory(status=status, runtime_family="hermes", gateway_token=secrets.token_urlsafe(32))

    with pytest.raises(AgentNotRunning) as refused:
        gateway_for(agent)

    assert (refused.value.code, status_of(refused.value)) == ("agent_not_running", 409)
    assert status in str(refused.value)


def test_the_provisioning_job_may_reach_a_deploying_agent():
    agent = AgentFactory(status="deploying", runtime_family="hermes", gateway_token=secrets.token_urlsafe(32),
                         gateway_host_port=19555)

    gateway = gateway_for(agent, allow_starting=True)

    assert (gateway.endpoint.host, gateway.endpoint.port) == ("127.0.0.1", 19555)


def test_a_provisioned_agent_is_reached_where_its_backend_says(http_receiver):
    agent = AgentFactory(runtime_family="hermes", gateway_host_port=http_receiver.port,
                         gateway_token=secrets.token_urlsafe(32))
    http_receiver.route("/health", {"status": "ok", "version": "0.19.0"})

    assert gateway_for(agent).health() == {"status": "ok", "version": "0.19.0"}


def test_an_agent_whose_target_is_gone_reads_as_the_engines_failure():
    agent = AgentFactory(execution_target_id="k8s:gone", deploy_target="k8s", gateway_token="t" * 43)

    with pytest.raises(DaemonUnreachable):
        gateway_for(agent)
    readiness = gateway_readiness(agent)
    assert readiness.ready is False and readiness.failing  # not ready, and why


def test_the_runtimes_refusals_read_as_502_and_unsupported_as_409(http_receiver):
    agent = AgentFactory(runtime_family="hermes", gateway_host_port=http_receiver.port,
                         gateway_token=secrets.token_urlsafe(32))
    http_receiver.route("/v1/capabilities", (500, {"error": {"message": "broken", "code": "boom"}}))
    http_receiver.route("/health/detailed", (401, {"error": {"message": "Invalid API key"}}))

    with pytest.raises(GatewayError) as refused:
        gateway_for(agent).handshake()
    assert (refused.value.code, status_of(refused.value), refused.value.runtime_code) == ("gateway_error", 502, "boom")
    with pytest.raises(GatewayAuthRefused) as auth:
        gateway_for(agent).ready()
    assert status_of(auth.value) == 502
    with pytest.raises(GatewayUnsupported) as unsupported:
        gateway_for(agent).logout("telegram")
    assert (unsupported.value.code, status_of(unsupported.value)) == ("unsupported", 409)


def test_a_gateway_that_does_not_answer_is_unreachable(http_receiver):
    agent = AgentFactory(runtime_family="openclaw", gateway_host_port=http_receiver.port,
                         gateway_token=secrets.token_urlsafe(32))
    http_receiver.stop()

    with pytest.raises(GatewayUnreachable) as down:
        gateway_for(agent).ready()
    with pytest.raises(GatewayUnreachable):
        gateway_for(agent).handshake()  # the WebSocket path

    assert (down.value.code, status_of(down.value)) == ("gateway_unreachable", 502)


def test_a_runtimes_message_never_carries_the_token(http_receiver):
    token = secrets.token_urlsafe(32)
    agent = AgentFactory(runtime_family="hermes", gateway_host_port=http_receiver.port, gateway_token=token)
    http_receiver.route("/v1/capabilities", (400, {"error": {"message": f"bad key {token} given"}}))

    with pytest.raises(GatewayError) as refused:
        gateway_for(agent).handshake()

    assert token not in str(refused.value) and "[redacted]" in str(refused.value)


def test_an_adopted_agent_with_a_weak_token_is_never_contacted(http_receiver, settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    agent = _adopted(http_receiver.url, token="a" * 40)

    with pytest.raises(GatewayUnreachable) as refused:
        gateway_for(agent)

    assert "weak" in str(refused.value)
    assert http_receiver.requests == []


@pytest.mark.parametrize("family", ["hermes", "openclaw"])
def test_an_adopted_agent_on_a_refused_address_is_never_contacted(http_receiver, family):
    agent = _adopted(http_receiver.url, family=family)  # loopback, not allow-listed

    with pytest.raises(GatewayUnreachable) as refused:
        gateway_for(agent).handshake()  # HTTP for Hermes, the WebSocket for OpenClaw

    assert "loopback" in str(refused.value)
    assert http_receiver.requests == []


def test_an_adopted_agent_is_reached_through_the_safe_session(http_receiver, settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1", "::1"]
    http_receiver.route("/health", {"status": "ok"})
    agent = _adopted(f"http://localhost:{http_receiver.port}")

    assert gateway_for(agent).health() == {"status": "ok"}
    assert http_receiver.requests[-1].header("Host") == f"localhost:{http_receiver.port}"


def test_an_undecryptable_token_fails_closed(http_receiver):
    from fleet.crypto import UndecryptableSecret

    agent = AgentFactory(runtime_family="hermes", gateway_host_port=http_receiver.port)
    agent.gateway_token = UndecryptableSecret("v1:gone:xxxx", "no key")

    with pytest.raises(GatewayUnreachable, match="cannot be decrypted"):
        gateway_for(agent)
    assert http_receiver.requests == []


def test_health_and_readiness_never_read_the_database(http_receiver, django_assert_num_queries):
    # The monitoring sweep checks health in worker threads, which must not touch the database.
    agent = AgentFactory(runtime_family="openclaw", gateway_host_port=http_receiver.port,
                         gateway_token=secrets.token_urlsafe(32))
    http_receiver.route("/health", {"ok": True, "status": "live"})
    http_receiver.route("/readyz", {"ready": True, "failing": []})

    with django_assert_num_queries(0):
        gateway = gateway_for(agent)
        assert gateway.health() == {"ok": True, "status": "live"}
        assert gateway.ready().ready is True
