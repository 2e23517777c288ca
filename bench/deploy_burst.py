"""A burst of deploys against the periodic work (docs/reliability.md): BURST deploys requested at once
on the real Docker engine (the small test runtime on the host network), with real Celery worker
processes on Redis, while a periodic tick (`fleet.worker_heartbeat`) is sent every second (bench.ticks). Two
layouts, one after the other:

- `one worker`: a single worker of concurrency 2 serving every queue (the layout before the
  queues were split: the ticks wait in line behind the deploys);
- `Procfile`: the `provision` worker (concurrency 2) and the `periodic` worker (concurrency 2),
  as the Procfile runs them.

Printed per layout: each tick's delay (sent to run, p50 and max, during the burst), the time
until every agent runs, and Fleet's time per deploy. Needs FLEET_TEST_DOCKER_HOST (the test
engine, .ci/docker-up.sh) and a Redis REDIS_URL; says so and skips otherwise.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

from bench import report
from bench.ticks import Tick, TickTimer

ROOT = Path(__file__).resolve().parents[1]
BURST = int(os.environ.get("BENCH_BURST_DEPLOYS", "50"))
TEST_IMAGE = "fleet-test-runtime:latest"
TICK_EVERY = 1.0
HEARTBEAT = Tick("fleet.worker_heartbeat", "periodic", period=30, send_every=TICK_EVERY)
LAYOUTS = {
    "one worker": [["-c", "2"]],
    "Procfile": [["-Q", "provision", "-c", "2"], ["-Q", "periodic", "-c", "2"]],
}


def _workers(arguments: list[list[str]], label: str) -> list[subprocess.Popen]:
    from django.conf import settings
    from django.db import connection

    from bench.__main__ import database_url

    env = {
        **os.environ,
        "DATABASE_URL": database_url(connection.settings_dict), "DEBUG": "false",
        "SECRET_KEY": settings.SECRET_KEY, "FLEET_ENCRYPTION_KEYS": settings.FLEET_ENCRYPTION_KEYS,
        "DOCKER_HOST": os.environ["FLEET_TEST_DOCKER_HOST"], "DOCKER_NETWORK_MODE": "host",
        "AGENT_IMAGE_OPENCLAW": TEST_IMAGE, "AGENT_IMAGE_HERMES": TEST_IMAGE, "DOCKER_READ_ONLY_ROOTFS": "false",
        "DOCKER_CONTAINER_LABELS": f"fleet.bench={label}", "LOG_LEVEL": "WARNING",
    }
    return [
        subprocess.Popen([sys.executable, "-m", "celery", "-A", "fleet", "worker", "--loglevel=WARNING",
                          "-n", f"bench{n}-{label}@%h", *args], cwd=ROOT, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for n, args in enumerate(arguments)
    ]


def _run(name: str, arguments: list[list[str]]) -> None:
    import docker
    from django.conf import settings

    from accounts.models import User
    from agents.models import Agent
    from agents.services.deploy import agent_deploy
    from agents.services.selection import DeployRequest
    from fleet.api.principal import Principal
    from fleet.celery import app

    label = uuid.uuid4().hex[:8]
    app.control.purge()
    workers = _workers(arguments, label)
    engine = docker.DockerClient(base_url=os.environ["FLEET_TEST_DOCKER_HOST"])
    try:
        owner = User.objects.create(email=f"burst-{label}@example.com")
        warm = TickTimer(settings.CELERY_BROKER_URL, [HEARTBEAT])
        warm.start()
        deadline = time.monotonic() + 60
        while len(warm.delays[HEARTBEAT.task]) < 3 and time.monotonic() < deadline:  # the workers are up and ticking
            time.sleep(0.1)
        warm.stop()

        timer = TickTimer(settings.CELERY_BROKER_URL, [HEARTBEAT])
        started = time.monotonic()
        ids = [agent_deploy(principal=Principal(user=owner), request=DeployRequest(name=f"burst-{n}")).pk
               for n in range(BURST)]
        timer.start()
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            pending = Agent.objects.filter(pk__in=ids).exclude(status__in=("running", "error")).count()
            if not pending:
                break
            time.sleep(0.2)
        all_running = time.monotonic() - started
        delays = timer.stop()[HEARTBEAT.task]
        errors = Agent.objects.filter(pk__in=ids, status="error").count()
        report(f"{BURST} deploys, {name}", seconds_to_all_settled=all_running, errors=errors,
               seconds_per_deploy=all_running / BURST, ticks=len(delays),
               tick_delay_p50_s=statistics.median(delays) if delays else float("nan"),
               tick_delay_max_s=max(delays) if delays else float("nan"))
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()
        for container in engine.containers.list(all=True, filters={"label": f"fleet.bench={label}"}):
            container.remove(force=True, v=True)


def main() -> None:
    from django.conf import settings

    if not os.environ.get("FLEET_TEST_DOCKER_HOST") or not settings.CELERY_BROKER_URL.startswith("redis"):
        print("  skipped: needs FLEET_TEST_DOCKER_HOST (.ci/docker-up.sh) and REDIS_URL (a Redis broker)")
        return
    for name, arguments in LAYOUTS.items():
        _run(name, arguments)
