"""Private services for fault tests: each test starts the processes it breaks, so a fault never
reaches another test (or the session's Redis db).

- `PrivateRedis` (tests.infra.private_redis): a `redis-server` of its own, no persistence (a restart
  loses every queued message, as a Redis without a volume does); `stop()` and `start()` keep
  the port.
- `PrivateDocker` (tests.infra.private_docker): a `dockerd` of its own beside the shared test
  engine, for a test that stops the engine; `private_stack(..., engine_url=its url)` runs the
  processes on it.
- `containers_of`: the test engine's containers of this session, per agent id.
- `PrivatePostgres` (tests.infra.private_postgres): a PostgreSQL cluster of its own, for a test
  that restarts the database; its URL as `env["DATABASE_URL"]` runs the processes on it.
- `Stack`: the environment every process gets (REDIS_URL of the private Redis, the test
  database, the Docker backend on the test engine with the small test image on the host
  network, this session's container label, the deadlines the test shortens), the Procfile's
  web process (tests.infra.web_server) and its other lines (Celery workers, beat, the gateway
  listener, the web process too), run as written. Each process gets a session of its own:
  `kill()` SIGKILLs the main process and its pool children at once; `pids()` names them all (a
  process replaced under it shows).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import connection

from agents.models import Agent, Status
from bench.__main__ import database_url
from tests.infra.docker import SESSION_ID, SESSION_LABEL, TEST_IMAGE
from tests.infra.private_redis import PrivateRedis
from tests.support import wait_until

ROOT = Path(__file__).resolve().parents[2]
# Deadlines short enough for the reconciler to take deploys over within a test: a deploying
# agent's job may give no news for max(AGENT_PROVISION_DEADLINE_SECONDS,
# AGENT_READY_TIMEOUT_SECONDS + AGENT_PROVISION_DEADLINE_MARGIN_SECONDS) = 15 s (the test
# runtime is ready in about a second).
SHORT_DEADLINES = {
    "AGENT_QUEUED_DEADLINE_SECONDS": "5",
    "AGENT_PROVISION_DEADLINE_SECONDS": "5",
    "AGENT_READY_TIMEOUT_SECONDS": "15",
    "AGENT_PROVISION_DEADLINE_MARGIN_SECONDS": "0",
}


def procfile_command(process_type: str) -> str:
    for line in (ROOT / "Procfile").read_text().splitlines():
        match = re.match(rf"{process_type}:\s*(.+)$", line)
        if match:
            return match.group(1)
    raise AssertionError(f"The Procfile has no {process_type} process.")


def containers_of(engine, agent_ids) -> dict[str, list]:
    """Every container of this session labelled with one of `agent_ids`, per agent (none: [])."""
    # A container removed between the engine's list and its inspection (a twin a job removes) is gone.
    found = engine.containers.list(all=True, filters={"label": [f"{SESSION_LABEL}={SESSION_ID}", "fleet.agent_id"]},
                                   ignore_removed=True)
    return {agent_id: [c for c in found if c.labels.get("fleet.agent_id") == agent_id] for agent_id in agent_ids}


@dataclass
class Worker:
    process_type: str
    process: subprocess.Popen
    log: Path

    def kill(self) -> None:
        """SIGKILL the worker and its pool processes: no warm shutdown, nothing acknowledged or
        given back to the broker."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def terminate(self) -> None:
        """SIGTERM, as a platform stops a process: Celery's warm shutdown, not waited for."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)

    def pids(self) -> set[int]:
        """The process and every process under it (a worker's pool, a web server's workers): a
        child that died and was replaced shows as another PID."""
        found, pending = set(), [self.process.pid]
        while pending:
            pid = pending.pop()
            found.add(pid)
            for task in Path(f"/proc/{pid}/task").glob("*/children"):
                try:
                    pending.extend(int(child) for child in task.read_text().split())
                except OSError:  # the process ended meanwhile
                    pass
        return found

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        self.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.kill()


@dataclass
class Stack:
    tmp_path: Path
    redis: PrivateRedis
    env: dict[str, str]
    workers: list[Worker] = field(default_factory=list)

    def worker(self, process_type: str, *, ready: str | Callable[[], bool] = " ready.", **env: str) -> Worker:
        """The Procfile's line for `process_type` (e.g. `provision`), run through a shell as a
        platform runs it, once its log says `ready` (a Celery worker's " ready.") or `ready()`
        answers true. Any Procfile process: `beat`, `gateway`, `web` too."""
        log = self.tmp_path / f"{process_type}-{len(self.workers)}.log"
        environment = {**self.env, **env, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
        with open(log, "w") as out:
            process = subprocess.Popen(["sh", "-c", procfile_command(process_type)], cwd=ROOT, env=environment,
                                       stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        worker = Worker(process_type, process, log)
        self.workers.append(worker)
        is_ready = ready if callable(ready) else lambda: ready in log.read_text()
        wait_until(lambda: is_ready() or process.poll() is not None, timeout=45, interval=0.1)
        assert process.poll() is None, log.read_text()[-3000:]
        return worker

    def send(self, task: str, *, queue: str) -> None:
        """Publish a task by name to the private broker, as beat does."""
        from fleet.celery import app

        with app.connection_for_write(self.redis.url) as conn:
            app.send_task(task, queue=queue, connection=conn)

    def logs(self) -> str:
        return "\n".join(f"--- {w.log.name}\n{w.log.read_text()[-3000:]}" for w in self.workers)


def _environment(redis_url: str, engine_url: str, extra: dict[str, str]) -> dict[str, str]:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    environment = {name: value for name, value in os.environ.items() if name not in ("CELERY_BROKER_URL",)}
    return {
        **environment,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": database_url(connection.settings_dict),
        "REDIS_URL": redis_url,
        # tests/settings.py moves REDIS_URL to the xdist worker's db once; this one is final.
        "FLEET_TEST_REDIS_WORKER": worker,
        "SECRET_KEY": settings.SECRET_KEY,
        "FLEET_ENCRYPTION_KEYS": settings.FLEET_ENCRYPTION_KEYS,
        "DOCKER_HOST": engine_url,
        "DOCKER_NETWORK_MODE": "host",
        "AGENT_IMAGE_OPENCLAW": TEST_IMAGE,
        "AGENT_IMAGE_HERMES": TEST_IMAGE,
        "DOCKER_READ_ONLY_ROOTFS": "false",
        "DOCKER_CONTAINER_LABELS": f"{SESSION_LABEL}={SESSION_ID}",
        "LOG_LEVEL": "INFO",
        **extra,
    }


@contextmanager
def private_stack(tmp_path: Path, engine_url: str, *, env: dict[str, str]) -> Iterator[Stack]:
    """A private Redis and the environment of the processes started on it; every process is
    stopped (workers before Redis) when the block ends."""
    private = PrivateRedis(tmp_path)
    private.start()
    stack = Stack(tmp_path, private, _environment(private.url, engine_url, env))
    try:
        yield stack
    finally:
        for worker in stack.workers:
            worker.stop()
        private.stop()


def wait_all_running(stack: Stack, ids, *, timeout: float, what: str) -> float:
    """Seconds until every agent of `ids` is `running`, the reconciler sent every 2 s (beat's
    every minute, sooner)."""
    started = time.monotonic()

    def all_running():
        stack.send("agents.tasks.reconcile_deploys", queue="periodic")
        return not Agent.objects.filter(pk__in=ids).exclude(status=Status.RUNNING).exists()

    wait_for(all_running, timeout=timeout, interval=2, what=what, stack=stack)
    return time.monotonic() - started


def wait_for(predicate, *, timeout: float, interval: float = 0.2, what: str = "", stack: Stack | None = None):
    """wait_until with the workers' logs in the failure (what the processes said)."""
    try:
        return wait_until(predicate, timeout=timeout, interval=interval)
    except AssertionError:
        raise AssertionError(f"{what or predicate} not within {timeout}s\n{stack.logs() if stack else ''}") from None
