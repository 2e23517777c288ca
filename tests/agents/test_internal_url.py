"""FLEET_INTERNAL_URL: the usage URL a workload gets, its default per network mode and port,
and that a real workload reaches it as handed (host network: Fleet's loopback port)."""

from __future__ import annotations

import pytest

from agents.models import Agent
from agents.services.deploy import agent_deploy
from agents.services.engine import workload_exec
from agents.services.provisioning import agent_provision
from agents.services.selection import DeployRequest
from agents.services.workload import fleet_internal_url, usage_url
from fleet.api.principal import Principal
from tests.factories.agents import AgentFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("configured", "mode", "port", "expected"), [
    ("", "host", 8000, "http://127.0.0.1:8000"),
    ("", "host", 9000, "http://127.0.0.1:9000"),
    ("", "bridge", 9000, "http://host.docker.internal:9000"),
    ("https://fleet.internal:8443/", "bridge", 9000, "https://fleet.internal:8443"),
])
def test_the_default_follows_the_network_mode_and_the_port(settings, configured, mode, port, expected):
    settings.FLEET_INTERNAL_URL, settings.DOCKER_NETWORK_MODE, settings.FLEET_PORT = configured, mode, port
    settings.NORA_PUBLIC_URL = "https://public.example.com"  # the public URL is not what workloads use

    assert fleet_internal_url() == expected
    agent = AgentFactory()
    assert usage_url(agent) == f"{expected}/api/agents/{agent.pk}/usage"


def test_a_workload_on_the_host_network_reaches_the_url_it_was_given(
    docker_settings, user, http_receiver, django_capture_on_commit_callbacks
):
    docker_settings.FLEET_INTERNAL_URL = ""
    docker_settings.FLEET_PORT = http_receiver.port  # "Fleet" serves here
    docker_settings.AGENT_READY_TIMEOUT_SECONDS = 30
    with django_capture_on_commit_callbacks(execute=False):
        agent = agent_deploy(principal=Principal(user=user), request=DeployRequest(name="reporter"))
    agent_provision(agent_id=agent.pk)
    agent = Agent.objects.get(pk=agent.pk)
    assert agent.status == "running", agent.last_error

    # The workload posts to $FLEET_USAGE_URL exactly as its environment holds it.
    result = workload_exec(agent, ["sh", "-c", 'wget -q -O - --post-data "{}" "$FLEET_USAGE_URL"'],
                           timeout=15, max_output=4096)

    received = http_receiver.wait_for(1)[0]
    assert (received.method, received.path) == ("POST", f"/api/agents/{agent.pk}/usage"), result


def test_a_bridged_container_can_resolve_the_default_host(docker_settings, docker_engine):
    from agents.backends.base import WorkloadSpec
    from agents.backends.docker import DockerBackend, engine_client

    spec = WorkloadSpec(agent_id="00000000-0000-4000-8000-000000000001", name="n", runtime_family="openclaw",
                        image="i", env={}, labels={}, vcpu=1, ram_mb=512, disk_gb=1)
    backend = DockerBackend(network_mode="bridge")
    options = backend._container_options(engine_client(backend.host), spec, 19999)

    assert options["extra_hosts"]["host.docker.internal"] == "host-gateway"
    assert options["extra_hosts"]["metadata"] == "0.0.0.0"  # the hardening entries stay
