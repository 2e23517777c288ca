"""One stats sampler tick for 1,000 agents, the engine calls replaced by a source that
answers at once, so the figures are the control plane's own cost (docs/performance.md:
at most 0.5 s and a constant number of queries per tick).

With FLEET_TEST_DOCKER_HOST set (and fleet-test-runtime:latest built there, see
.ci/docker-up.sh), also the engine side on a handful of real containers: the time of one
DockerBackend.stats() call with the two-sample read it used to make and with one-shot reads,
and how many of 1,000 agents one engine lane reaches in a tick's budget (1,000 agents
spread over CONTAINERS real containers: an engine before 25.0 reads each container with a
read waiting once per collector tick, so with 1,000 distinct containers its ticks would
take longer than here).
"""

from __future__ import annotations

import logging
import os
import statistics
import time
import uuid
from dataclasses import dataclass

from django.db import connection
from django.test.utils import CaptureQueriesContext

from bench import measure, report

AGENTS = 1000
TICKS = 20
CONTAINERS = 12  # a handful: the machine and its engine are shared
BUSY = 4  # of which this many busy-loop under a 0.5 CPU limit
TEST_IMAGE = "fleet-test-runtime:latest"


def _fleet(count: int) -> None:
    from accounts.models import User
    from agents.models import Agent

    owner = User.objects.create(email="bench-sampler@example.com")
    Agent.objects.bulk_create(
        Agent(
            name=f"bench-{n}",
            owner=owner,
            status="running" if n % 10 else "warning",
            execution_target_id="docker" if n % 4 else f"remote:host-{n % 3}",
            container_id=f"{n:064x}",
        )
        for n in range(count)
    )


def _instant(agent):
    from agents.backends.base import StatsSnapshot

    return StatsSnapshot(12.5, 256.0, 1024.0, 25.0, 10.0, 5.0, 1.0, 2.0, 17, 3600.0, True)


def main() -> None:
    from agents.stats.sampler import collect
    from agents.stats.services import stats_sample_tick

    _fleet(AGENTS)

    with CaptureQueriesContext(connection) as captured:
        first = stats_sample_tick(source=_instant)
    assert first.stored == AGENTS, first
    queries = [q["sql"].split(" ", 1)[0] for q in captured]

    timing = measure(lambda: stats_sample_tick(source=_instant), repeat=TICKS, warmup=2)
    report(
        f"sampler tick, {AGENTS} agents, instant source",
        median_ms=timing.median_ms,
        p95_ms=timing.p95_ms,
        queries_per_tick=len(queries),
        statements=" ".join(queries),
    )

    from agents.models import Agent

    agents = list(Agent.objects.all())
    started = time.perf_counter()
    for _ in range(TICKS):
        collect(agents, source=_instant, lane_of=lambda a: a.execution_target_id)
    report("  of which the concurrent collection alone", median_ms=(time.perf_counter() - started) / TICKS * 1000)

    def slow(agent):
        time.sleep(0.02)  # a 20 ms engine round trip
        return _instant(agent)

    timing = measure(lambda: stats_sample_tick(source=slow), repeat=3, warmup=0)
    report(f"sampler tick, {AGENTS} agents, 20 ms per engine call", median_ms=timing.median_ms)

    _real_engine()


@dataclass
class _Agent:
    """What the Docker backend and the sampler read of an agent."""

    container_id: str
    pk: str = ""
    execution_target_id: str = "docker"

    def __post_init__(self):
        self.pk = self.pk or str(uuid.uuid4())

    @property
    def id(self) -> str:
        return self.pk


def _real_engine() -> None:
    url = os.environ.get("FLEET_TEST_DOCKER_HOST", "")
    if not url:
        report("real engine", skipped="FLEET_TEST_DOCKER_HOST is not set")
        return
    import docker
    from django.conf import settings

    from agents.backends import docker as docker_backend
    from agents.stats.sampler import Limits, collect
    from agents.stats.services import backend_stats

    client = docker.DockerClient(base_url=url, version="auto", timeout=60)
    if not client.images.list(name=TEST_IMAGE):
        report("real engine", skipped=f"{TEST_IMAGE} is not built on {url}")
        return
    settings.DOCKER_HOST = url
    # More reads in flight than docker-py pools connections for: urllib3 says so on every one.
    logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)
    version = client.version()
    report("real engine", version=version["Version"], api=client.api.api_version, containers=CONTAINERS)

    label = f"fleet.bench=stats_sampler-{os.getpid()}"
    containers = []
    try:
        for n in range(CONTAINERS):
            loop = "while :; do :; done" if n < BUSY else "sleep 3600"
            containers.append(
                client.containers.run(
                    TEST_IMAGE, ["-c", loop], entrypoint=["sh"], detach=True, network_mode="host",
                    nano_cpus=500_000_000, mem_limit=128 * 1024 * 1024, labels=dict([label.split("=")]),
                )
            )
        time.sleep(2)
        agents = [_Agent(c.id) for c in containers]
        _per_call(docker_backend, agents)
        _lane(docker_backend, agents, collect, Limits, backend_stats)
    finally:
        for container in containers:
            container.remove(force=True, v=True)
        client.close()


def _two_sample_reads(docker_backend):
    """The backend as it was: every running container read with stream=False alone."""

    class TwoSample:
        def __enter__(self):
            self.kept = docker_backend.ONE_SHOT_API
            docker_backend.ONE_SHOT_API = "99.0"  # as if the engine were too old for one-shot

        def __exit__(self, *exc):
            docker_backend.ONE_SHOT_API = self.kept

    return TwoSample()


def _per_call(docker_backend, agents) -> None:
    backend = docker_backend.DockerBackend()
    busy, idle = agents[0], agents[-1]

    def timed(agent):
        started = time.perf_counter()
        snapshot = backend.stats(agent)
        return time.perf_counter() - started, snapshot.cpu_percent

    with _two_sample_reads(docker_backend):
        before = [timed(busy) for _ in range(5)]
        idle_before = timed(idle)
    report(
        "  stats() before: two-sample read",
        median_s=statistics.median(t for t, _ in before),
        busy_cpu=before[-1][1],
        idle_cpu=idle_before[1],
    )
    docker_backend._cpu_samples.clear()
    first = timed(busy)
    idle_first = timed(idle)
    report(
        "  stats() after: first read of a container (two one-shot reads)",
        seconds=first[0],
        busy_cpu=first[1],
        idle_cpu=idle_first[1],
    )
    warm = [timed(busy) for _ in range(5)]
    idle_warm = timed(idle)
    report(
        "  stats() after: later reads (one one-shot read, delta from the cached reading)",
        median_s=statistics.median(t for t, _ in warm),
        busy_cpu=warm[-1][1],
        idle_cpu=idle_warm[1],
    )


def _lane(docker_backend, agents, collect, Limits, backend_stats) -> None:  # noqa: N803 - Limits is the class, imported late
    """1,000 agents on one engine lane: how many one 8 s tick reaches, cold and warm."""
    fleet = [_Agent(agents[n % len(agents)].container_id) for n in range(AGENTS)]

    def tick(title, limits=Limits()):  # noqa: B008 - Limits is a frozen dataclass, safe to share as a default
        started = time.perf_counter()
        result = collect(fleet, source=backend_stats, lane_of=lambda a: a.execution_target_id, limits=limits)
        report(
            f"  one tick, {AGENTS} agents on {len(agents)} containers, {title}",
            reached=len(result.snapshots),
            failed=len(result.failed),
            timed_out=len(result.timed_out),
            skipped=len(result.skipped),
            seconds=time.perf_counter() - started,
        )

    with _two_sample_reads(docker_backend):
        tick("before (two-sample reads)")
    docker_backend._cpu_samples.clear()
    tick("one-shot, cache empty at the start")
    tick("one-shot, cached readings")
    # Where each read waits for the engine's collector tick (engines before 25.0), the reads
    # in flight per lane, not the cost of a read, set how many agents a tick reaches.
    for per_lane in (60, 150):
        wide = Limits(max_workers=per_lane + 16, per_lane=per_lane)
        tick(f"one-shot, cached readings, per_lane={per_lane}", wide)
