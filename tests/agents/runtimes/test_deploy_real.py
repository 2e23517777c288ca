"""A deploy of each family through the API, by a real Celery worker, onto the real runtime image:
it reaches `running` only once the runtime is ready, records the runtime's version, opens the
OpenClaw Control UI at its gateway URL, and a stop during an active run aborts the run first, so
the runtime exits by itself instead of draining until the engine kills it."""

from __future__ import annotations

import threading

import pytest
import requests

from agents.gateway import gateway_for
from agents.models import Agent
from tests.factories.accounts import UserFactory
from tests.infra.runtimes import openclaw_model_patch
from tests.support import client_for

from .support import runtime_image

pytestmark = [pytest.mark.docker, pytest.mark.worker, pytest.mark.runtime]


@pytest.fixture
def live(docker_settings, docker_engine, celery_worker_live):
    docker_settings.AGENT_IMAGE_OPENCLAW = runtime_image(docker_engine, "openclaw")
    docker_settings.AGENT_IMAGE_HERMES = runtime_image(docker_engine, "hermes")
    docker_settings.DOCKER_READ_ONLY_ROOTFS = True  # the real images run on a read-only root
    docker_settings.AGENT_READY_TIMEOUT_SECONDS = 90  # OpenClaw: 10 to 25 s on these machines
    return celery_worker_live


@pytest.fixture
def client(live):
    return client_for(UserFactory())


def deploy_and_wait(client, live, **body) -> Agent:
    response = client.post("/api/agents/deploy", body, format="json")
    assert response.status_code == 201, response.content
    agent_id = response.json()["id"]
    live.wait_until(lambda: Agent.objects.get(pk=agent_id).status in ("running", "error"), timeout=120)
    agent = Agent.objects.get(pk=agent_id)
    assert agent.status == "running", agent.last_error
    return agent


def test_a_hermes_agent_runs_on_the_hermes_image_with_its_variables(client, live, docker_engine):
    agent = deploy_and_wait(client, live, runtime_family="hermes", ram_mb=1024)

    assert agent.runtime_version == "0.19.0" and agent.last_handshake_at is not None
    env = dict(item.split("=", 1) for item in docker_engine.containers.get(agent.container_id).attrs["Config"]["Env"])
    assert env["API_SERVER_KEY"] == agent.gateway_token
    assert env["API_SERVER_PORT"] == str(agent.gateway_host_port)
    assert "OPENCLAW_GATEWAY_TOKEN" not in env
    assert gateway_for(agent).ready().ready

    assert client.delete(f"/api/agents/{agent.id}").json() == {"success": True}
    assert not docker_engine.containers.list(all=True, filters={"label": f"fleet.agent_id={agent.id}"})


def test_an_openclaw_agent_is_ready_opens_its_control_ui_and_aborts_its_run_when_stopped(
    client, live, fake_model, docker_engine
):
    agent = deploy_and_wait(client, live, runtime_family="openclaw", ram_mb=2048)
    assert agent.runtime_version == "2026.9.6" and agent.last_handshake_at is not None

    gateway_url = client.get(f"/api/agents/{agent.id}/gateway-url").json()["url"]
    ui = requests.get(gateway_url, timeout=10)
    assert ui.status_code == 200 and "text/html" in ui.headers["Content-Type"]

    gateway = gateway_for(agent)
    gateway.config_patch(openclaw_model_patch(fake_model))  # also reads the device key in this thread
    asked = len(fake_model.requests)
    fake_model.hold()  # the run waits on the model: an active run the runtime would drain for minutes
    turn = threading.Thread(target=lambda: _quietly(gateway.send_message, "Wait for me.", conversation="stop"))
    try:
        turn.start()
        fake_model.wait_for(asked + 1, timeout=60)

        stopped = client.post(f"/api/agents/{agent.id}/stop")
    finally:
        fake_model.release()
        turn.join(timeout=60)

    assert stopped.status_code == 200 and stopped.json()["status"] == "stopped"
    state = docker_engine.containers.get(agent.container_id).attrs["State"]
    assert state["ExitCode"] != 137, "the engine had to kill a runtime still draining its run"


def _quietly(call, *args, **kwargs) -> None:
    try:
        call(*args, **kwargs)
    except Exception:  # the run ends aborted or cut off by the stop: what this test wants
        pass
