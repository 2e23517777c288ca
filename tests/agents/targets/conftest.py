"""Fixtures of the registered-target tests: a real sshd in front of the test Docker engine, and
Remote Docker hosts registered through the API."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest

from tests.infra.sshd import SshServer


@pytest.fixture(scope="module")
def docker_socket_path(docker_engine_url) -> str:
    parsed = urlparse(docker_engine_url)
    assert parsed.scheme == "unix", f"the sshd fixture forwards to a Unix socket, not {docker_engine_url}"
    return parsed.path


@pytest.fixture(scope="module")
def sshd(docker_socket_path):
    """One sshd per module (about 50 ms to start), stopped after it."""
    server = SshServer.start(docker_socket_path)
    yield server
    server.close()


@pytest.fixture
def remote_settings(settings):
    """Loopback hosts are refused as Remote Docker hosts unless allow-listed, as on a real server."""
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.REMOTE_DOCKER_NETWORK_MODE = "host"  # the test engine has no bridge network
    return settings


def host_body(sshd, docker_socket_path, *, auth=None, **fields) -> dict:
    """A POST /remote-hosts body for the fixture's sshd (key auth unless `auth` is given)."""
    return {
        "name": "lab",
        "host": "127.0.0.1",
        "port": sshd.port,
        "username": sshd.username,
        "auth": auth or {"type": "key", "privateKey": sshd.private_key_pem},
        "dockerSocket": docker_socket_path,
        **fields,
    }
