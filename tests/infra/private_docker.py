"""A dockerd of a test's own, which the test stops and starts again (an engine outage) while the
shared test engine (.ci/docker-up.sh) keeps serving every other test.

    engine = PrivateDocker(); engine.start(); engine.load_image(docker_engine, TEST_IMAGE)
    ...; engine.stop(); engine.start(); ...; engine.close()

Flags as .ci/docker-up.sh's (no bridge, no iptables: containers use the host network), with its
own data root, exec root, pidfile and socket, so it never touches the shared engine's state;
each dockerd runs the containerd it manages under its exec root, so the two coexist. `stop()`
is a SIGTERM, as `systemctl stop docker`: without live-restore the engine stops its containers;
`start()` brings it back on the same socket and data root, so its containers, volumes and
images are there again, as after a real engine restart. `close()` removes every container and
volume, stops the engine and removes its folder.

The folder is a short one under /tmp, not pytest's tmp_path: a unix socket path holds at most
108 bytes, and containerd puts its own sockets under the exec root.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import docker
from docker import errors as docker_errors

from tests.support import need_service, wait_until

START_TIMEOUT = 60  # seconds; about one here
# dockerd's own shutdown waits for its containers (their stop timeout, at most its 15 s
# --shutdown-timeout) before it exits.
STOP_TIMEOUT = 60

ENGINE_FLAGS = ("--iptables=false", "--ip-forward=false", "--ip-masq=false", "--bridge=none")


class PrivateDocker:
    def __init__(self):
        need_service(os.geteuid() == 0 and bool(shutil.which("dockerd")), "this test starts its own dockerd (as root)")
        self.folder = Path(tempfile.mkdtemp(prefix="fleet-dockerd-", dir="/tmp"))
        self.url = f"unix://{self.folder / 'docker.sock'}"
        self.log = self.folder / "dockerd.log"
        self.started_in: float | None = None  # seconds the last start() took to answer
        self._process: subprocess.Popen | None = None

    def start(self) -> None:
        began = time.monotonic()
        with open(self.log, "a") as log:
            self._process = subprocess.Popen(
                ["dockerd", *ENGINE_FLAGS, "-H", self.url,
                 "--data-root", str(self.folder / "data"), "--exec-root", str(self.folder / "exec"),
                 "--pidfile", str(self.folder / "docker.pid")],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
        try:
            wait_until(lambda: self.answers() or self._process.poll() is not None, timeout=START_TIMEOUT,
                       interval=0.05)
        except AssertionError:
            raise AssertionError(f"dockerd did not answer within {START_TIMEOUT}s:\n{self._log_tail()}") from None
        assert self._process.poll() is None, f"dockerd exited:\n{self._log_tail()}"
        self.started_in = time.monotonic() - began

    def stop(self) -> None:
        """SIGTERM, and wait until the engine (and its containerd) has exited."""
        if self._process is None:
            return
        self._process.send_signal(signal.SIGTERM)
        try:
            self._process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(self._process.pid, signal.SIGKILL)
            self._process.wait(timeout=10)
        self._process = None

    def close(self) -> None:
        """Remove every container and volume, stop the engine, remove its folder."""
        if self._process is not None and self.answers():
            client = self.client()
            try:
                for container in client.containers.list(all=True):
                    try:
                        container.remove(force=True, v=True)
                    except docker_errors.NotFound:
                        pass
                client.volumes.prune()
            finally:
                client.close()
        self.stop()
        self._unmount_leftovers()
        shutil.rmtree(self.folder, ignore_errors=True)

    def client(self) -> docker.DockerClient:
        return docker.DockerClient(base_url=self.url, version="auto", timeout=60)

    def answers(self) -> bool:
        try:
            client = docker.DockerClient(base_url=self.url, version="auto", timeout=2)
        except docker_errors.DockerException:  # the version lookup found no engine
            return False
        try:
            return bool(client.ping())
        except docker_errors.DockerException:
            return False
        finally:
            client.close()

    def load_image(self, source: docker.DockerClient, name: str) -> None:
        """Copy `name` from another engine (`docker save | docker load`, streamed)."""
        client = self.client()
        try:
            client.images.load(source.images.get(name).save(named=True))
            client.images.get(name)  # raises when the load did not tag it
        finally:
            client.close()

    def _unmount_leftovers(self) -> None:
        """dockerd leaves its exec root's netns/default mounted when it exits."""
        prefix = f"{self.folder}/"
        with open("/proc/self/mountinfo") as mounts:
            points = [line.split()[4] for line in mounts if line.split()[4].startswith(prefix)]
        for point in sorted(points, reverse=True):  # the deepest first
            subprocess.run(["umount", "-l", point], check=False, capture_output=True)

    def _log_tail(self) -> str:
        return self.log.read_text()[-3000:] if self.log.exists() else ""
