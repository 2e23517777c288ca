"""A deploy of each family through the API, by a real Celery worker, onto the real runtime image:
it reaches `running` only once the runtime is ready, records the runtime's version, opens the
OpenClaw Control UI at its gateway URL, and a stop during an active run aborts the run first, so
the runtime exits by itself instead of draining until the engine kills it."""

from __future__ import annotations

import json
import threading
from urllib.parse import urlsplit

import pytest

from agents.gateway import gateway_for
from agents.models import Agent
from tests.factories.accounts import UserFactory
from tests.infra.asgi import edge_request
from tests.infra.docker import SESSION_ID, SESSION_LABEL, exec_in
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
    # The host network of a local engine: the gateway listens on loopback only, not 0.0.0.0.
    assert env["FLEET_GATEWAY_BIND"] == "loopback"
    listening = exec_in(docker_engine.containers.get(agent.container_id), ["sh", "-c", "cat /proc/net/tcp"])
    port = f":{agent.gateway_host_port:04X} "
    assert {line.split()[1].split(":")[0] for line in listening.output.decode().splitlines()
            if port in line and line.split()[3] == "0A"} == {"0100007F"}

    assert client.delete(f"/api/agents/{agent.id}").json() == {"success": True}
    assert not docker_engine.containers.list(all=True, ignore_removed=True,
                                             filters={"label": f"fleet.agent_id={agent.id}"})


def test_an_openclaw_agent_is_ready_opens_its_control_ui_and_aborts_its_run_when_stopped(
    client, live, fake_model, docker_engine
):
    agent = deploy_and_wait(client, live, runtime_family="openclaw", ram_mb=2048)
    assert agent.runtime_version == "2026.9.6" and agent.last_handshake_at is not None

    # Its Control UI, through the gateway proxy on the agent's own origin.
    link = urlsplit(client.post(f"/api/agents/{agent.id}/gateway/session").json()["url"])
    signed_in = edge_request("GET", f"{link.path}?{link.query}", headers={"host": link.netloc})
    ui = edge_request("GET", "/", headers={"host": link.netloc, "accept": "text/html",
                                           "cookie": signed_in.headers["set-cookie"].split(";")[0]})
    assert ui.status == 200 and "text/html" in ui.headers["content-type"]
    assert client.get(f"/api/agents/{agent.id}/gateway-url").json()["url"] == f"http://{link.netloc}/"

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


@pytest.fixture
def own_hermes_image(docker_engine):
    """An operator's own Hermes image: another default state folder (HERMES_HOME, HOME), and no
    `rm`. Made from the Hermes image, tagged for this session, removed after."""
    base = runtime_image(docker_engine, "hermes")
    maker = docker_engine.containers.run(base, entrypoint=["sh", "-c", 'rm -f "$(command -v rm)"'], user="0",
                                         detach=True, labels={SESSION_LABEL: SESSION_ID})
    try:
        assert maker.wait(timeout=60)["StatusCode"] == 0
        tag = f"fleet-test/own-hermes:{SESSION_ID}"
        config = docker_engine.images.get(base).attrs["Config"]  # the maker's own run is not the image's
        maker.commit(repository=tag.split(":")[0], tag=tag.split(":")[1],
                     changes=[f"ENTRYPOINT {json.dumps(config['Entrypoint'])}", f"USER {config['User']}",
                              "ENV HERMES_HOME=/opt/hermes-data", "ENV HOME=/root"])
    finally:
        maker.remove(force=True)
    yield tag
    docker_engine.images.remove(tag, force=True)


def test_an_operators_own_image_keeps_its_state_in_the_volume_and_deletes_files_without_rm(
        client, live, docker_settings, docker_engine, own_hermes_image):
    docker_settings.AGENT_IMAGE_HERMES = own_hermes_image
    agent = deploy_and_wait(client, live, runtime_family="hermes", ram_mb=1024)  # a read-only root

    container = docker_engine.containers.get(agent.container_id)
    assert exec_in(container, ["sh", "-c", "command -v rm"]).exit_code != 0  # no rm in this image
    env = dict(item.split("=", 1) for item in container.attrs["Config"]["Env"])
    assert (env["HERMES_HOME"], env["HOME"]) == ("/state", "/state/home")
    for path in ("notes/plan.md", "notes/old/a.md"):
        answer = client.put(f"/api/agents/{agent.id}/files/{path}", b"x", content_type="application/octet-stream")
        assert answer.json() == {"success": True}, answer.content
    assert client.delete(f"/api/agents/{agent.id}/files/notes/plan.md").json() == {"success": True}
    assert client.delete(f"/api/agents/{agent.id}/files/notes/old").json() == {"success": True}
    assert client.get(f"/api/agents/{agent.id}/files/notes/plan.md").status_code == 404
    assert [e["name"] for e in client.get(f"/api/agents/{agent.id}/files/notes").json()] == []
    assert client.delete(f"/api/agents/{agent.id}").json() == {"success": True}  # before its image goes
