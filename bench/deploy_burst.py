"""A burst of deploys against the periodic work (docs/reliability.md): BURST deploys requested at once
on the real Docker engine (host network), with real Celery worker processes on Redis, while the
periodic work is sent on a cadence (bench.ticks): a heartbeat every second, the stats sampler every
2 s and the monitoring sweep every 3 s. Two layouts, one after the other:

- `one worker`: a single worker of concurrency 2 serving every queue (the layout before the
  queues were split: the ticks wait in line behind the deploys);
- `Procfile`: the `provision` worker (concurrency 2) and the `periodic` worker (concurrency 2),
  as the Procfile runs them.

The runtime is the small test runtime, or with BENCH_BURST_RUNTIME=hermes the real Hermes image
(FLEET_TEST_HERMES_IMAGE, read-only root as in production; BENCH_BURST_DEPLOYS=100 is the scale
goal's burst). Printed per layout: the time until every agent runs; each tick's delay (sent to
done, p50 and max) and how many were not done within their period after the burst (a tick
dropped or late); and per deploy (medians over the burst) where its time went, from its events and the
engine's record of its container: waiting for a provision worker and Fleet's steps before the
container exists (`queued_to_created`), the engine starting it (`created_to_started`), and the
runtime's own start until Fleet saw it ready and marked it running (`started_to_running`). A
deploy alone (the `Procfile` layout, after the bursts) shows Fleet's and the engine's own share
without the wait for a worker. Needs FLEET_TEST_DOCKER_HOST
(the test engine, .ci/docker-up.sh) and a Redis REDIS_URL; says so and skips otherwise.
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
RUNTIME = os.environ.get("BENCH_BURST_RUNTIME", "test")  # or "hermes": the real image
TEST_IMAGE = "fleet-test-runtime:latest"
HERMES_IMAGE = os.environ.get("FLEET_TEST_HERMES_IMAGE", "fleet/hermes:0.19.0")
HEARTBEAT = Tick("fleet.worker_heartbeat", "periodic", period=30, send_every=1.0)
TICKS = [HEARTBEAT, Tick("agents.stats.sample", "periodic", period=10, send_every=2),
         Tick("agents.tasks.monitor_agents", "periodic", period=30, send_every=3)]
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
        "AGENT_IMAGE_OPENCLAW": TEST_IMAGE, "AGENT_IMAGE_HERMES": HERMES_IMAGE if RUNTIME == "hermes" else TEST_IMAGE,
        "DOCKER_READ_ONLY_ROOTFS": "true" if RUNTIME == "hermes" else "false",
        "DOCKER_CONTAINER_LABELS": f"fleet.bench={label}", "LOG_LEVEL": "WARNING",
    }
    return [
        subprocess.Popen([sys.executable, "-m", "celery", "-A", "fleet", "worker", "--loglevel=WARNING",
                          "-n", f"bench{n}-{label}@%h", *args], cwd=ROOT, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for n, args in enumerate(arguments)
    ]


def _run(name: str, arguments: list[list[str]], burst: int = BURST) -> None:
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

        timer = TickTimer(settings.CELERY_BROKER_URL, TICKS)
        started = time.monotonic()
        request = {"runtime_family": "hermes", "ram_mb": 512} if RUNTIME == "hermes" else {}
        ids = [agent_deploy(principal=Principal(user=owner), request=DeployRequest(name=f"burst-{n}", **request)).pk
               for n in range(burst)]
        timer.start()
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            pending = Agent.objects.filter(pk__in=ids).exclude(status__in=("running", "error")).count()
            if not pending:
                break
            time.sleep(0.2)
        all_running = time.monotonic() - started
        delays = timer.stop(drain=max(tick.period for tick in TICKS))  # late: not done within its period
        errors = Agent.objects.filter(pk__in=ids, status="error").count()
        report(f"{burst} deploys of the {RUNTIME} runtime, {name}", seconds_to_all_settled=all_running,
               errors=errors, seconds_per_deploy=all_running / burst, **_shares(engine, ids))
        for tick in TICKS:
            done = delays[tick.task]
            late = [seconds for task, seconds in timer.late if task == tick.task]
            report(f"  tick {tick.task} (period {tick.period:.0f} s)", done=len(done), late=len(late),
                   delay_p50_s=statistics.median(done) if done else float("nan"),
                   delay_max_s=max(done) if done else float("nan"))
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


def _shares(engine, ids) -> dict[str, float]:
    """Medians over the burst of where each deploy's time went (module docstring)."""
    from django.utils.dateparse import parse_datetime

    from agents.models import Agent
    from fleet.models import Event

    queued = dict(Event.objects.filter(agent_id__in=ids, kind="agent.queued").values_list("agent_id", "occurred_at"))
    running = dict(Event.objects.filter(agent_id__in=ids, kind="agent.running").values_list("agent_id", "occurred_at"))
    phases: dict[str, list[float]] = {"queued_to_created": [], "created_to_started": [], "started_to_running": []}
    for agent_id, container_id in Agent.objects.filter(pk__in=ids, status="running").values_list("pk",
                                                                                                  "container_id"):
        state = engine.api.inspect_container(container_id)
        created, started = parse_datetime(state["Created"]), parse_datetime(state["State"]["StartedAt"])
        marks = {"queued_to_created": (queued[agent_id], created), "created_to_started": (created, started),
                 "started_to_running": (started, running[agent_id])}
        for phase, (begin, end) in marks.items():
            phases[phase].append((end - begin).total_seconds())
    return {f"{phase}_p50_s": statistics.median(values) if values else float("nan")
            for phase, values in phases.items()}


def main() -> None:
    from django.conf import settings

    if not os.environ.get("FLEET_TEST_DOCKER_HOST") or not settings.CELERY_BROKER_URL.startswith("redis"):
        print("  skipped: needs FLEET_TEST_DOCKER_HOST (.ci/docker-up.sh) and REDIS_URL (a Redis broker)")
        return
    chosen = os.environ.get("BENCH_BURST_LAYOUTS")  # e.g. "Procfile": only those layouts
    for name, arguments in LAYOUTS.items():
        if not chosen or name in chosen.split(","):
            _run(name, arguments)
    _run("Procfile, alone", LAYOUTS["Procfile"], burst=1)
