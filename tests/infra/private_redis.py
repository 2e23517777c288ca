"""A redis-server of a test's own on a free loopback port, no persistence, that the test stops
and starts again on the same port (a broker or cache outage): the fault tests and the worker's
broker-outage test.

    server = PrivateRedis(tmp_path); server.start(); ...; server.stop(); server.start()
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import redis

from tests.infra.runtimes import free_loopback_port
from tests.support import need_service, wait_until


class PrivateRedis:
    def __init__(self, tmp_path: Path):
        need_service(bool(shutil.which("redis-server")), "this test starts its own redis-server")
        self.port = free_loopback_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._log = tmp_path / f"redis-{self.port}.log"
        self._process: subprocess.Popen | None = None

    def start(self) -> None:
        self._process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=open(self._log, "a"), stderr=subprocess.STDOUT,  # noqa: SIM115 (closed with the process)
        )
        wait_until(self.answers, timeout=15, interval=0.05)

    def stop(self) -> None:
        if self._process is None:
            return
        self._process.kill()  # as a crash or a lost host: no shutdown save (there is none anyway)
        self._process.wait(timeout=10)
        self._process.stdout and self._process.stdout.close()
        self._process = None

    def answers(self) -> bool:
        try:
            return bool(redis.Redis.from_url(self.url, socket_connect_timeout=0.5).ping())
        except redis.RedisError:
            return False
