"""Defect 8: agent containers run hardened (no capabilities, no-new-privileges, a pids limit, a
read-only root with state on its volume and a tmpfs /tmp, metadata names resolving nowhere,
gateway ports published on the operator's address) and the real OpenClaw and Hermes images
still deploy through the API, become ready and shake hands under it."""

from __future__ import annotations

import uuid

import pytest

from agents.backends.base import WorkloadSpec
from agents.backends.docker import DockerBackend, hardening_options
from agents.gateway import gateway_for
from agents.models import Agent
from tests.agents.runtimes.support import runtime_image
from tests.factories.accounts import UserFactory
from tests.infra.docker import exec_in
from tests.support import client_for


def test_every_container_gets_the_hardening_options(settings):
    settings.DOCKER_PIDS_LIMIT = 321

    options = hardening_options()

    assert options["cap_drop"] == ["ALL"] and options["cap_add"] == []
    assert options["security_opt"] == ["no-new-privileges:true"]
    assert options["pids_limit"] == 321
    assert options["read_only"] is True and "/tmp" in options["tmpfs"]
    assert options["extra_hosts"]["metadata.google.internal"] == "0.0.0.0"


def test_the_read_only_root_can_be_turned_off_for_a_runtime_that_needs_it(settings):
    settings.DOCKER_READ_ONLY_ROOTFS = False

    assert "read_only" not in hardening_options()


@pytest.mark.parametrize(("host", "configured", "published"), [
    ("unix:///var/run/docker.sock", "", "127.0.0.1"),
    ("tcp://10.0.0.5:2376", "", "0.0.0.0"),
    ("unix:///var/run/docker.sock", "192.168.5.5", "192.168.5.5"),
])
def test_bridge_mode_publishes_the_gateway_on_the_chosen_address(settings, host, configured, published):
    settings.DOCKER_PUBLISH_ADDRESS = configured
    backend = DockerBackend(host=host, network_mode="bridge")

    assert backend.publish_address == published


@pytest.mark.parametrize(("host", "mode", "configured", "bind"), [
    ("unix:///var/run/docker.sock", "host", "", "loopback"),  # the host's own sockets: loopback only
    ("tcp://10.0.0.5:2376", "host", "", "lan"),  # the control plane comes over the network
    ("unix:///var/run/docker.sock", "host", "192.168.5.5", "lan"),
    ("unix:///var/run/docker.sock", "bridge", "", "lan"),  # inside the container; the port is published
])
def test_the_gateway_listens_on_loopback_on_a_local_engine_s_host_network(settings, host, mode, configured, bind):
    settings.DOCKER_PUBLISH_ADDRESS = configured

    assert DockerBackend(host=host, network_mode=mode).gateway_bind == bind


@pytest.mark.django_db
@pytest.mark.docker
def test_bridge_options_carry_the_publish_address(settings, docker_engine, docker_settings):
    settings.DOCKER_PUBLISH_ADDRESS = ""
    settings.DOCKER_READ_ONLY_ROOTFS = True  # docker_settings turns it off for the busybox test image
    backend = DockerBackend(network_mode="bridge")
    agent_id = str(uuid.uuid4())
    spec = WorkloadSpec(agent_id=agent_id, name=f"fleet-{agent_id}", image="img", runtime_family="hermes", env={},
                        labels={}, vcpu=1, ram_mb=512, disk_gb=1, gateway_port=9119)

    options = backend._container_options(docker_engine, spec, 19123)

    assert options["ports"] == {"9119/tcp": ("127.0.0.1", 19123)}
    assert options["cap_drop"] == ["ALL"] and options["read_only"] is True


@pytest.fixture
def live(docker_settings, docker_engine, celery_worker_live):
    docker_settings.AGENT_IMAGE_OPENCLAW = runtime_image(docker_engine, "openclaw")
    docker_settings.AGENT_IMAGE_HERMES = runtime_image(docker_engine, "hermes")
    docker_settings.DOCKER_READ_ONLY_ROOTFS = True  # the real images run on a read-only root
    docker_settings.AGENT_READY_TIMEOUT_SECONDS = 90
    return celery_worker_live


def _exec(container, command: str):
    result = exec_in(container, ["sh", "-c", command])
    return result.exit_code, result.output.decode(errors="replace").strip()


@pytest.mark.docker
@pytest.mark.worker
@pytest.mark.runtime
@pytest.mark.parametrize(("family", "ram_mb"), [("hermes", 1024), ("openclaw", 2048)])
def test_the_real_runtime_runs_ready_under_the_hardening(live, docker_engine, family, ram_mb):
    client = client_for(UserFactory())
    response = client.post("/api/agents/deploy", {"runtime_family": family, "ram_mb": ram_mb}, format="json")
    assert response.status_code == 201, response.content
    agent_id = response.json()["id"]
    live.wait_until(lambda: Agent.objects.get(pk=agent_id).status in ("running", "error"), timeout=150)
    agent = Agent.objects.get(pk=agent_id)
    assert agent.status == "running", agent.last_error
    assert agent.last_handshake_at is not None and gateway_for(agent).ready().ready

    container = docker_engine.containers.get(agent.container_id)
    host_config = container.attrs["HostConfig"]
    assert host_config["CapDrop"] == ["ALL"] and not host_config["CapAdd"]
    assert "no-new-privileges:true" in host_config["SecurityOpt"]
    assert host_config["PidsLimit"] == 1024
    assert host_config["ReadonlyRootfs"] is True and "/tmp" in host_config["Tmpfs"]

    assert _exec(container, "touch /root-write-test")[0] != 0  # the root is read-only
    assert _exec(container, "touch /state/ok && touch /tmp/ok")[0] == 0  # state and scratch are not
    status = _exec(container, "grep -m1 CapEff /proc/self/status")[1]
    assert status.endswith("0000000000000000")  # no effective capabilities
    assert _exec(container, "grep NoNewPrivs /proc/self/status")[1].endswith("1")
    hosts = _exec(container, "cat /etc/hosts")[1]
    assert "0.0.0.0\tmetadata.google.internal" in hosts or "0.0.0.0 metadata.google.internal" in hosts

    assert client.delete(f"/api/agents/{agent.id}").json() == {"success": True}
