"""FLEET_INTERNAL_URL: the usage URL a workload gets, its default per network mode and port,
that a real workload reaches it as handed (host network: Fleet's loopback port), and the warning
(system check agents.W001, /api/health `warnings`) when bridged agents could not reach the
default because the web server binds loopback only."""

from __future__ import annotations

import io
import os

import pytest
import requests
from django.core import checks
from django.core.management import call_command, get_commands, load_command_class

from agents.backends.engine import workload_exec
from agents.checks import check_internal_url
from agents.models import Agent
from agents.services.deploy import agent_deploy
from agents.services.selection import DeployRequest
from agents.services.workload import fleet_internal_url, internal_url_warning, usage_url
from fleet import web
from fleet.api.principal import Principal
from tests.factories.agents import AgentFactory
from tests.infra.provisioning import provision_to_end
from tests.infra.web_server import procfile_web_server

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
    provision_to_end(agent_id=agent.pk)
    agent = Agent.objects.get(pk=agent.pk)
    assert agent.status == "running", agent.last_error

    # The workload posts to $FLEET_USAGE_URL exactly as its environment holds it.
    result = workload_exec(agent, ["sh", "-c", 'wget -q -O - --post-data "{}" "$FLEET_USAGE_URL"'],
                           timeout=15, max_output=4096)

    received = http_receiver.wait_for(1)[0]
    assert (received.method, received.path) == ("POST", f"/api/agents/{agent.pk}/usage"), result


def test_a_bridged_container_can_resolve_the_default_host(docker_settings, docker_engine):
    from agents.backends.base import WorkloadSpec
    from agents.backends.docker import DockerBackend
    from agents.backends.docker_engine import engine_client

    spec = WorkloadSpec(agent_id="00000000-0000-4000-8000-000000000001", name="n", runtime_family="openclaw",
                        image="i", env={}, labels={}, vcpu=1, ram_mb=512, disk_gb=1)
    backend = DockerBackend(network_mode="bridge")
    options = backend._container_options(engine_client(backend.host), spec, 19999)

    assert options["extra_hosts"]["host.docker.internal"] == "host-gateway"
    assert options["extra_hosts"]["metadata"] == "0.0.0.0"  # the hardening entries stay


# -- the warning when bridged agents cannot reach the default --------------------------------------


@pytest.mark.parametrize("bind", ["127.0.0.1", "localhost", "[::1]", "127.0.0.1,::1", " 127.0.0.2 "])
def test_a_bridge_with_a_loopback_bind_and_no_url_is_a_warning_saying_what_to_set(settings, bind):
    settings.FLEET_INTERNAL_URL, settings.DOCKER_NETWORK_MODE, settings.FLEET_PORT = "", "bridge", 9000
    settings.BIND_ADDRESS = bind

    warning = internal_url_warning()
    messages = check_internal_url()

    assert warning is not None
    assert "http://host.docker.internal:9000" in warning.problem and "BIND_ADDRESS" in warning.problem
    assert "Set BIND_ADDRESS" in warning.remedy and "172.17.0.1" in warning.remedy
    assert "FLEET_INTERNAL_URL" in warning.remedy
    assert [(m.id, m.level, m.msg, m.hint) for m in messages] == [
        ("agents.W001", checks.WARNING, warning.problem, warning.remedy)]


@pytest.mark.parametrize(("configured", "mode", "bind"), [
    ("http://10.0.0.5:8000", "bridge", "127.0.0.1"),  # FLEET_INTERNAL_URL set: the operator chose
    ("", "host", "127.0.0.1"),  # the host network shares the host's loopback
    ("", "bridge", "172.17.0.1"),  # the bridge's gateway
    ("", "bridge", "0.0.0.0"),
    ("", "bridge", "127.0.0.1,172.17.0.1"),  # gunicorn's several addresses
    ("", "bridge", "fleet.lan"),  # a name: it may well be reachable
])
def test_no_warning_when_bridged_agents_can_reach_fleet(settings, configured, mode, bind):
    settings.FLEET_INTERNAL_URL, settings.DOCKER_NETWORK_MODE, settings.BIND_ADDRESS = configured, mode, bind

    assert internal_url_warning() is None
    assert check_internal_url() == []


def test_manage_py_check_prints_it_at_start_up(settings):
    settings.FLEET_INTERNAL_URL, settings.DOCKER_NETWORK_MODE, settings.BIND_ADDRESS = "", "bridge", "127.0.0.1"
    out, err = io.StringIO(), io.StringIO()

    call_command("check", stdout=out, stderr=err)  # what migrate (the release step, make run) runs first

    printed = out.getvalue() + err.getvalue()
    assert "(agents.W001) Bridged agents report their usage to" in printed
    assert "HINT: Set BIND_ADDRESS" in printed


@pytest.mark.parametrize("command", ["bootstrap_admin", "build_runtime_images", "gateway_call",
                                     "rotate_encryption_key", "setup_periodic_tasks"])
def test_fleet_s_own_commands_leave_it_to_migrate_and_check(command):
    assert load_command_class(get_commands()[command], command).requires_system_checks == []


@pytest.mark.parametrize(("argv", "expected"), [
    (["--host", "0.0.0.0", "--port", "8000"], "0.0.0.0"),
    (["--port", "8000", "--host=172.17.0.1"], "172.17.0.1"),
    (["--port", "8000"], "as before"),  # granian's default host is loopback, BIND_ADDRESS's default too
])
def test_the_web_process_records_the_address_it_binds(monkeypatch, argv, expected):
    monkeypatch.setenv("BIND_ADDRESS", "as before")

    web.record_bind_address(argv)

    assert os.environ["BIND_ADDRESS"] == expected


@pytest.mark.django_db(transaction=True)
def test_the_procfiles_web_process_warns_in_its_health_with_its_defaults(tmp_path):
    env = {"DOCKER_NETWORK_MODE": "bridge", "FLEET_INTERNAL_URL": "", "LOG_LEVEL": "WARNING"}
    with procfile_web_server(tmp_path, env=env) as server:  # the Procfile binds ${BIND_ADDRESS:-127.0.0.1}
        warnings = requests.get(f"{server}/api/health", timeout=30).json()["warnings"]
        port = server.rsplit(":", 1)[1]
    with procfile_web_server(tmp_path, env={**env, "FLEET_INTERNAL_URL": "http://fleet.internal:8000"}) as server:
        none = requests.get(f"{server}/api/health", timeout=30).json()["warnings"]

    (warning,) = warnings
    assert f"http://host.docker.internal:{port}" in warning and "listens on 127.0.0.1 only" in warning
    assert none == []
