"""DockerBackend.read_state_file / write_state_file against the real engine: a file of the
agent's state folder, written into a running container, owned by the image's user."""

from __future__ import annotations

import pytest

from agents.backends.base import WorkloadMissing
from tests.agents.backends.support import FakeAgent
from tests.infra.docker import exec_in

pytestmark = pytest.mark.usefixtures("docker_settings")


def _exec(docker_engine, container_id: str, command: str) -> tuple[int, str]:
    result = exec_in(docker_engine.containers.get(container_id), ["sh", "-c", command])
    return result.exit_code, result.output.decode().strip()


def test_a_written_file_is_read_back_and_seen_inside_the_container(backend, docker_engine, deployed):
    backend.write_state_file(deployed, ".env", b"A='1'\n")

    assert backend.read_state_file(deployed, ".env") == b"A='1'\n"
    assert _exec(docker_engine, deployed.container_id, "cat /state/.env") == (0, "A='1'")
    assert _exec(docker_engine, deployed.container_id, "stat -c %a /state/.env") == (0, "600")


def test_writing_again_replaces_the_file(backend, deployed):
    backend.write_state_file(deployed, ".env", b"first")
    backend.write_state_file(deployed, ".env", b"second")

    assert backend.read_state_file(deployed, ".env") == b"second"


def test_two_writes_of_one_size_within_a_second_have_two_modification_times(backend, docker_engine, deployed):
    # Hermes re-reads config.yaml when its (mtime_ns, size) changes: a model switched to a name
    # of the same length, written within the second, must still look changed.
    backend.write_state_file(deployed, "config.yaml", b"model: a-1\n")
    first = _exec(docker_engine, deployed.container_id, "stat -c %y /state/config.yaml")
    backend.write_state_file(deployed, "config.yaml", b"model: a-2\n")
    second = _exec(docker_engine, deployed.container_id, "stat -c %y /state/config.yaml")

    assert first != second


def test_a_missing_file_reads_as_none(backend, deployed):
    assert backend.read_state_file(deployed, "no-such-file") is None


@pytest.mark.parametrize("path", ["/etc/passwd", "../etc/passwd", "a/../../etc/passwd", ""])
def test_paths_outside_the_state_folder_are_refused(backend, deployed, path):
    with pytest.raises(ValueError):
        backend.write_state_file(deployed, path, b"x")


def test_without_a_container_it_is_workload_missing(backend):
    with pytest.raises(WorkloadMissing):
        backend.read_state_file(FakeAgent(), ".env")
