"""A changed host key is refused: the test fails closed with host_key_mismatch and keeps the pin,
agents on the host answer 502 daemon_unreachable, and only dropping the pin on purpose
(PATCH hostKeyFingerprint=null) lets the next test pin the new key."""

from __future__ import annotations

import pytest

from agents.backends.base import BackendUnreachable
from agents.backends.registry import backend_for_target
from tests.factories.accounts import UserFactory
from tests.infra.sshd import SshServer
from tests.support import client_for

from .conftest import host_body

pytestmark = [pytest.mark.docker, pytest.mark.django_db]


@pytest.fixture
def own_sshd(docker_socket_path):
    """An sshd of this test alone: it is restarted with another host key."""
    server = SshServer.start(docker_socket_path)
    yield server
    server.close()


def test_a_changed_host_key_fails_closed_until_the_pin_is_dropped(remote_settings, own_sshd, docker_socket_path):
    client = client_for(UserFactory())
    host = client.post("/api/remote-hosts", host_body(own_sshd, docker_socket_path), format="json").json()
    first = client.post(f"/api/remote-hosts/{host['id']}/test").json()
    assert first["ok"] and first["hostKeyFingerprint"] == own_sshd.fingerprint
    pinned = own_sshd.fingerprint

    own_sshd.restart_with_new_host_key()
    assert own_sshd.fingerprint != pinned

    result = client.post(f"/api/remote-hosts/{host['id']}/test").json()
    assert (result["ok"], result["status"], result["code"]) == (False, "failed", "host_key_mismatch")
    assert result["hostKeyFingerprint"] == pinned
    assert "host_key_mismatch" in result["error"] and own_sshd.fingerprint in result["error"]
    stored = client.get(f"/api/remote-hosts/{host['id']}").json()
    assert (stored["status"], stored["hostKeyFingerprint"]) == ("failed", pinned)
    with pytest.raises(BackendUnreachable, match="host_key_mismatch"):  # nor does the backend
        backend_for_target(f"remote:{host['id']}").probe()

    dropped = client.patch(f"/api/remote-hosts/{host['id']}", {"hostKeyFingerprint": None}, format="json").json()
    assert (dropped["status"], dropped["hostKeyFingerprint"]) == ("untested", None)
    again = client.post(f"/api/remote-hosts/{host['id']}/test").json()
    assert (again["ok"], again["hostKeyFingerprint"]) == (True, own_sshd.fingerprint)
