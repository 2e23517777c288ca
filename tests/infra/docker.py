"""The real Docker engine for tests (started by .ci/docker-up.sh) and the local test runtime image.

    def test_deploy_runs_a_container(docker_engine, docker_settings):
        ... the Docker backend now drives the test engine, on the host network, with
        fleet-test-runtime:latest, which serves GET /health on the port it is given ...
        docker_engine.containers.list(filters={"label": "fleet.managed=true"})

`docker_engine` is a docker.DockerClient for FLEET_TEST_DOCKER_HOST. When that is unset and we
are root on a machine with dockerd, the fixture runs .ci/docker-up.sh itself. Containers made
while `docker_settings` is active carry this session's label (other sessions may share the
engine) and are removed after each test module, with their state volumes; those of sessions
that died are removed when the next session starts.

The image (tests/infra/images) answers /health with 200 and /env with the names of the
environment variables it got; `docker exec <id> allocate 64` holds 64 MB of memory.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import uuid
from pathlib import Path

import docker
import pytest
from docker import errors as docker_errors

from agents.backends.base import ExecResult
from agents.backends.docker import container_exec
from tests.support import need_service

ROOT = Path(__file__).resolve().parents[2]
TEST_IMAGE = "fleet-test-runtime:latest"
SESSION_LABEL = "fleet.test_session"
# The pid lets a later session tell a crashed session's leftovers from a live one's containers.
SESSION_ID = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"

_engine: docker.DockerClient | None = None  # set once a test has used the engine

EXEC_TIMEOUT = 60  # seconds


def exec_in(container, argv) -> ExecResult:
    """`argv` run in `container` to its end, as the backend runs it: `.exit_code`, `.output`
    (docker-py's exec_run can lose a fast command's whole output: docker/docker-py#2042)."""
    argv = ["sh", "-c", argv] if isinstance(argv, str) else argv
    return container_exec(container.client.api, container.id, argv, timeout=EXEC_TIMEOUT, max_output=1 << 24)


def _start_local_engine() -> tuple[str | None, str]:
    """(socket URL, "") from .ci/docker-up.sh, or (None, why not)."""
    if os.geteuid() != 0 or not shutil.which("dockerd"):
        return None, "no Docker engine: set FLEET_TEST_DOCKER_HOST or run .ci/docker-up.sh as root"
    try:
        result = subprocess.run(
            [str(ROOT / ".ci" / "docker-up.sh")], capture_output=True, text=True, timeout=600
        )
    except subprocess.TimeoutExpired:
        return None, ".ci/docker-up.sh did not finish within 10 minutes"
    last_line = (result.stdout.strip().splitlines() or [""])[-1]
    if result.returncode != 0 or "FLEET_TEST_DOCKER_HOST=" not in last_line:
        return None, f".ci/docker-up.sh failed: {result.stderr.strip()[-500:]}"
    return last_line.split("=", 1)[1], ""


def _ensure_test_image(url: str) -> str:
    """An empty string when the test image is built from the current sources (build.sh is a
    no-op then), else why it could not be built."""
    build = ROOT / "tests" / "infra" / "images" / "build.sh"
    result = subprocess.run(
        [str(build), TEST_IMAGE], capture_output=True, text=True, timeout=300, env={**os.environ, "DOCKER_HOST": url}
    )
    return "" if result.returncode == 0 else f"building {TEST_IMAGE} failed: {result.stderr.strip()[-500:]}"


@pytest.fixture(scope="session")
def docker_engine_url() -> str:
    url = os.environ.get("FLEET_TEST_DOCKER_HOST", "")
    reason = ""
    if not url:
        url, reason = _start_local_engine()
    need_service(bool(url), reason)
    return url


@pytest.fixture(scope="session")
def docker_engine(docker_engine_url) -> docker.DockerClient:
    global _engine
    try:
        client = docker.DockerClient(base_url=docker_engine_url, version="auto", timeout=60)
        client.ping()
    except docker_errors.DockerException as exc:
        need_service(False, f"the Docker engine at {docker_engine_url} does not answer: {exc}")
    problem = _ensure_test_image(docker_engine_url)
    need_service(not problem, problem)
    remove_abandoned_containers(client)
    _engine = client
    yield client
    _engine = None
    client.close()


@pytest.fixture
def docker_settings(settings, docker_engine, docker_engine_url):
    """Point the Docker backend at the test engine, on the host network, with the test image."""
    settings.DOCKER_HOST = docker_engine_url
    settings.DOCKER_NETWORK_MODE = "host"
    settings.AGENT_IMAGE_OPENCLAW = TEST_IMAGE
    settings.AGENT_IMAGE_HERMES = TEST_IMAGE
    settings.DOCKER_CONTAINER_LABELS = {**settings.DOCKER_CONTAINER_LABELS, SESSION_LABEL: SESSION_ID}
    # The busybox test runtime writes its pages under /www at start; the real runtime images run
    # on a read-only root (tests that switch to them set DOCKER_READ_ONLY_ROOTFS back to true).
    settings.DOCKER_READ_ONLY_ROOTFS = False
    return settings


def _session_alive(session_id: str) -> bool:
    pid = session_id.split("-", 1)[0]
    return pid.isdigit() and Path(f"/proc/{pid}").exists()


def _remove(containers) -> None:
    for container in containers:
        try:
            container.remove(force=True, v=True)
        except docker_errors.NotFound:
            pass
        except docker_errors.APIError as exc:
            # 409: another worker's cleanup is removing the same abandoned container.
            if exc.status_code != 409:
                raise


def _remove_volumes(volumes) -> None:
    for volume in volumes:
        try:
            volume.remove(force=True)
        except docker_errors.APIError:
            pass  # still used by a container another cleanup is removing: the next one gets it


def remove_session_containers(client: docker.DockerClient) -> None:
    """Remove the fleet containers and state volumes this test session created (never another
    session's)."""
    labels = ["fleet.managed=true", f"{SESSION_LABEL}={SESSION_ID}"]
    _remove(client.containers.list(all=True, filters={"label": labels}, ignore_removed=True))
    _remove_volumes(client.volumes.list(filters={"label": labels}))


def remove_abandoned_containers(client: docker.DockerClient) -> None:
    """Remove what test sessions that died before their cleanup left behind (they hold ports)."""
    tagged = client.containers.list(all=True, filters={"label": SESSION_LABEL}, ignore_removed=True)
    _remove(c for c in tagged if not _session_alive(c.labels[SESSION_LABEL]))
    volumes = client.volumes.list(filters={"label": SESSION_LABEL})
    _remove_volumes(v for v in volumes if not _session_alive((v.attrs.get("Labels") or {})[SESSION_LABEL]))


@pytest.fixture(scope="module", autouse=True)
def _remove_docker_containers_after_module():
    yield
    if _engine is not None:
        remove_session_containers(_engine)


@pytest.fixture
def dead_socket(tmp_path) -> str:
    """A Docker host URL of a unix socket that existed and was closed: connecting is refused,
    as to an engine that stopped."""
    path = tmp_path / "dead.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.close()
    return f"unix://{path}"
