"""Defect 11: 502 bodies never name the engine's address (DOCKER_HOST) or another internal one."""

from __future__ import annotations

import pytest

from agents.models import Status
from fleet.api.errors import without_addresses

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("host", ["tcp://10.77.0.9:2375", "unix:///run/secret-engine/docker.sock"])
def test_an_unreachable_engine_answers_502_without_its_address(tenancy, settings, host):
    settings.DOCKER_HOST = host
    agent = tenancy.agent(owner=tenancy.editor, status=Status.RUNNING, container_id="abc")

    for path in ("stats", "gateway-url"):
        response = tenancy.client("editor").get(f"/api/agents/{agent.id}/{path}")
        assert response.status_code == 502, response.content
        text = response.content.decode()
        assert "10.77.0.9" not in text and "secret-engine" not in text and "2375" not in text


def test_an_engine_refusal_answers_502_without_the_engines_or_any_address(tenancy, settings, http_receiver):
    # A real HTTP engine on loopback that negotiates a version, then fails every call with a
    # message naming an internal address, as a proxy in front of an engine does.
    http_receiver.route("/version", {"ApiVersion": "1.45", "Version": "27.0.0"})
    http_receiver.respond_with(500, {"message": "upstream tcp://10.77.0.9:2375 refused"})
    port = http_receiver.url.rsplit(":", 1)[1].strip("/")
    settings.DOCKER_HOST = f"tcp://127.0.0.1:{port}"
    agent = tenancy.agent(owner=tenancy.editor, status=Status.RUNNING, container_id="abc")

    response = tenancy.client("editor").get(f"/api/agents/{agent.id}/stats")

    assert (response.status_code, response.json()["code"]) == (502, "daemon_unreachable")
    text = response.content.decode()
    assert "10.77.0.9" not in text and "127.0.0.1" not in text and port not in text


@pytest.mark.parametrize("message", [
    "refused: ('Connection aborted.', http+docker://localhost/v1.47/containers/x/json)",
    "Error while fetching server API version: tcp://192.168.1.20:2376 timed out",
    "connect to [fd00::5]:2375 failed",
    "dial unix /var/run/docker.sock: connect: permission denied",
])
def test_addresses_are_taken_out_of_upstream_messages(message):
    scrubbed = without_addresses(message)

    for leak in ("localhost/v1", "192.168.1.20", "fd00::5", "/var/run/docker.sock"):
        assert leak not in scrubbed
