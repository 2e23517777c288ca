"""RemoteDockerBackend.attach_exec through a real sshd in front of the real engine: the Docker
backend's terminal over the host's SSH channels (docker-py, read in one thread per session).
The same shell as a local engine's: its user, its TTY's size, and closing it ends everything
started from it."""

from __future__ import annotations

import asyncio
import threading

import pytest

from agents.backends.docker import DockerBackend
from agents.backends.remote_docker import RemoteDockerBackend
from agents.backends.ssh_endpoint import SshEndpoint
from agents.backends.terminal import ThreadedExecSession
from tests.agents.backends.support import FakeAgent, spec_for
from tests.agents.backends.terminal_support import MARKED_PROCESSES, output_until
from tests.support import wait_until

pytestmark = [pytest.mark.docker, pytest.mark.sshd]


@pytest.fixture
def remote(sshd, docker_socket_path, remote_settings, docker_settings) -> RemoteDockerBackend:
    endpoint = SshEndpoint(host="127.0.0.1", port=sshd.port, username=sshd.username, auth_type="key",
                           docker_socket=docker_socket_path, pinned_fingerprint=sshd.fingerprint,
                           private_key=sshd.private_key_pem)
    return RemoteDockerBackend("terminal-test-host", endpoint)


@pytest.fixture
def running(docker_settings):
    """A container of the test image, made on the engine the sshd forwards to."""
    agent = FakeAgent()
    return agent.place(DockerBackend().create(agent, spec_for(agent)))


def readers() -> int:
    return sum(1 for thread in threading.enumerate() if thread.name == "fleet-follow")


def marked(backend, agent) -> list[str]:
    return backend.exec(agent, MARKED_PROCESSES, timeout=10, max_output=10_000).output.split()


def test_a_remote_hosts_shell_runs_sized_as_the_images_user_and_ends_with_its_processes(remote, running):
    async def scenario():
        shell = await remote.attach_exec(running, cols=90, rows=25)
        assert isinstance(shell, ThreadedExecSession)  # SSH channels only block: one thread reads them
        await shell.write(b'sleep 300 & echo "u=$(id -u)= size=$(stty size)="\n')
        found = await output_until(shell, rb"u=(\d+)= size=(\d+ \d+)=")
        await shell.resize(120, 40)
        await shell.write(b'echo "again=$(stty size)="\n')
        again = await output_until(shell, rb"again=(\d+ \d+)=")
        during = await asyncio.to_thread(marked, remote, running)
        await shell.close()
        return found.groups(), again.group(1), during

    readers_before = readers()
    (uid, size), resized, during = asyncio.run(scenario())
    assert (uid, size, resized) == (b"0", b"25 90", b"40 120")  # the test image runs as root
    assert len(during) >= 2  # the shell and its sleep
    wait_until(lambda: marked(remote, running) == [], timeout=10)
    wait_until(lambda: readers() <= readers_before, timeout=10)  # the session's reading thread ended
