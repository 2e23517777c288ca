"""The connection test of a Remote Docker host against a real OpenSSH server in front of the
real Docker engine: key and password sign-in, the host key pinned at the first success, a
changed host key refused (fail closed), and the Docker version reported."""

from __future__ import annotations

import pytest

from agents.targets.models import RemoteHost
from tests.factories.accounts import UserFactory
from tests.infra.sshd import openssh_private_key
from tests.support import client_for

from .conftest import host_body

pytestmark = [pytest.mark.docker, pytest.mark.django_db]


@pytest.fixture
def owner(db):
    return UserFactory()


@pytest.fixture
def client(owner, remote_settings):
    return client_for(owner)


def register(client, sshd, docker_socket_path, **fields) -> dict:
    response = client.post("/api/remote-hosts", host_body(sshd, docker_socket_path, **fields), format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_a_key_host_tests_ready_pins_its_host_key_and_reports_docker(client, sshd, docker_socket_path, docker_engine):
    host = register(client, sshd, docker_socket_path)
    assert (host["status"], host["hostKeyFingerprint"], host["dockerVersion"]) == ("untested", None, None)

    result = client.post(f"/api/remote-hosts/{host['id']}/test").json()

    assert result == {"ok": True, "status": "ready", "hostKeyFingerprint": sshd.fingerprint,
                      "dockerVersion": docker_engine.version()["Version"]}
    stored = client.get(f"/api/remote-hosts/{host['id']}").json()
    assert stored["status"] == "ready" and stored["hostKeyFingerprint"] == sshd.fingerprint
    assert stored["lastTestedAt"] is not None and stored["lastError"] is None


def test_a_password_host_tests_ready(client, sshd, docker_socket_path):
    host = register(client, sshd, docker_socket_path, auth={"type": "password", "password": sshd.password})
    assert host["auth"] == {"type": "password", "privateKey": None, "passphrase": None, "password": "[REDACTED]"}

    result = client.post(f"/api/remote-hosts/{host['id']}/test").json()

    assert (result["ok"], result["status"], result["hostKeyFingerprint"]) == (True, "ready", sshd.fingerprint)


def test_an_encrypted_key_signs_in_with_its_passphrase(client, sshd, docker_socket_path):
    key = openssh_private_key(passphrase="correct-horse-42")
    sshd.authorize(key, "correct-horse-42")
    host = register(client, sshd, docker_socket_path,
                    auth={"type": "key", "privateKey": key, "passphrase": "correct-horse-42"})
    assert host["auth"] == {"type": "key", "privateKey": "[REDACTED]", "passphrase": "[REDACTED]", "password": None}

    assert client.post(f"/api/remote-hosts/{host['id']}/test").json()["ok"] is True


def test_a_wrong_password_fails_the_test_without_pinning(client, sshd, docker_socket_path):
    host = register(client, sshd, docker_socket_path, auth={"type": "password", "password": "not-the-password-1"})

    result = client.post(f"/api/remote-hosts/{host['id']}/test").json()

    assert (result["ok"], result["status"], result["code"]) == (False, "failed", "auth_failed")
    assert result["hostKeyFingerprint"] is None
    assert RemoteHost.objects.get(pk=host["id"]).host_key_fingerprint == ""


def test_a_key_the_server_does_not_know_fails_with_auth_failed(client, sshd, docker_socket_path):
    host = register(client, sshd, docker_socket_path, auth={"type": "key", "privateKey": openssh_private_key()})

    result = client.post(f"/api/remote-hosts/{host['id']}/test").json()

    assert (result["ok"], result["code"]) == (False, "auth_failed")


def test_a_wrong_docker_socket_fails_the_test(client, sshd, docker_socket_path):
    host = register(client, sshd, docker_socket_path, dockerSocket="/run/no-such-engine.sock")

    result = client.post(f"/api/remote-hosts/{host['id']}/test").json()

    assert (result["ok"], result["status"]) == (False, "failed")
    assert result["code"] in ("docker_socket_refused", "docker_unreachable")


def test_a_host_with_no_ssh_server_fails_as_unreachable(client, sshd, docker_socket_path):
    from tests.infra.sshd import free_loopback_port

    host = register(client, sshd, docker_socket_path, port=free_loopback_port())

    result = client.post(f"/api/remote-hosts/{host['id']}/test").json()

    assert (result["ok"], result["status"], result["code"]) == (False, "failed", "unreachable")
