"""10,000 agents over 20 engines (issue 32): the stats sampler's tick, the monitoring sweep and
the console dashboard's panels, against simulated engines (bench/_engine_sim.py: the Docker
Engine API on loopback Unix sockets, and the runtimes' readiness on loopback ports).

Goals (docs/performance.md): a sampler tick under 10 s (it runs every 10 s) with bounded
concurrency per engine, a monitoring sweep under 30 s, each dashboard panel under 50 ms.

The 20 engines are registered targets `remote:<host id>` (RemoteHost rows, looked up as in
production), but their backend is the Docker backend on the simulator's socket: Remote Docker's
SSH channels are not part of what is measured. Stats reads wait as this machine's engine makes
them wait (BENCH_SCALE_ENGINE_MODE=collector: until the engine's next 1 s collector tick, Docker
before 25.0), or a fixed delay (=fixed, BENCH_SCALE_ENGINE_DELAY seconds, default 0.003: engines
since 25.0). Sizes: BENCH_SCALE_ENGINES (20), BENCH_SCALE_PER_ENGINE (500). BENCH_SCALE_PARTS
(default "sampler,monitoring,dashboard") runs only the parts named: the sweep alone in about a
minute; the dashboard alone with the same fleet in the database and no simulator.
"""

from __future__ import annotations

import logging
import os
import resource
import time
import uuid

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from bench import measure, report

from ._engine_sim import EngineSim, container_id
from ._usage_rows import budgets_create, table_rows, usage_rows_generate

ENGINES = int(os.environ.get("BENCH_SCALE_ENGINES", 20))
PER_ENGINE = int(os.environ.get("BENCH_SCALE_PER_ENGINE", 500))
MODE = os.environ.get("BENCH_SCALE_ENGINE_MODE", "collector")
DELAY = float(os.environ.get("BENCH_SCALE_ENGINE_DELAY", 0.003))
USAGE_ROWS = int(os.environ.get("BENCH_SCALE_USAGE_ROWS", 300_000))
TICKS = 3
PARTS = set(os.environ.get("BENCH_SCALE_PARTS", "sampler,monitoring,dashboard").split(","))


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _fleet(sim: EngineSim | None, agent_ids: list[list[str]]) -> list[str]:
    """The agents, each on its engine's container; returns the engines' target ids. Without a
    simulator (the dashboard alone) the same rows, no gateway port."""
    from accounts.models import User
    from agents.models import Agent
    from agents.targets.models import RemoteHost

    owner = User.objects.create(email="bench-scale@example.com")
    hosts = [RemoteHost.objects.create(owner=owner, name=f"sim-{k}", host="127.0.0.1", username="fleet",
                                       auth_type="key", status="ready") for k in range(ENGINES)]
    now = timezone.now()
    Agent.objects.bulk_create(
        (Agent(id=agent_id, name=f"scale-{k}-{n}", owner=owner, status="running", runtime_family="openclaw",
               deploy_target="remote-docker", execution_target_id=hosts[k].execution_target_id,
               container_id=container_id(k, n), container_name=f"fleet-sim-{k}-{n}",
               gateway_host_port=sim.gateway_ports[n % len(sim.gateway_ports)] if sim else None,
               gateway_token=f"tok-{agent_id}",
               node=f"sim-engine-{k}", last_handshake_at=now)
         for k, ids in enumerate(agent_ids) for n, agent_id in enumerate(ids)),
        batch_size=2000,
    )
    return [host.execution_target_id for host in hosts]


def _engines_registered(sim: EngineSim, targets: list[str]):
    """`remote:<id>` served by the Docker backend on each simulated engine's socket, the host
    looked up as the real row does (one query per backend). Returns the row to put back."""
    from agents.backends import registry
    from agents.backends.docker import DockerBackend
    from agents.targets.models import remote_host_of

    socket_of = {target: sim.socket_of(k) for k, target in enumerate(targets)}

    def factory(execution_target_id: str):
        if remote_host_of(execution_target_id) is None:
            raise registry.UnknownTarget(execution_target_id)
        return DockerBackend(host=socket_of[execution_target_id], network_mode="host")

    kept = registry.TARGETS["remote"]
    registry.target_backend_set("remote", factory=factory, instances=lambda: list(targets))
    return kept


def _sampler(title: str) -> None:
    from agents.backends import docker as docker_backend
    from agents.models import StatsSample
    from agents.stats.services import stats_sample_tick

    docker_backend._cpu_samples.clear()
    for n in range(TICKS + 1):
        cpu, started = _cpu(), time.perf_counter()
        with CaptureQueriesContext(connection) as captured:
            tick = stats_sample_tick()
        seconds = time.perf_counter() - started
        report(f"sampler tick {n + 1} ({'cold: no earlier reading' if n == 0 else 'warm'}), {title}",
               seconds=seconds, cpu_s=_cpu() - cpu, agents=tick.agents, stored=tick.stored, failed=tick.failed,
               timed_out=tick.timed_out, skipped=tick.skipped, queries=len(captured))
    report("  samples stored", rows=StatsSample.objects.count())


def _monitoring() -> None:
    from agents.services.monitoring import agents_monitor

    for n in range(2):
        cpu, started = _cpu(), time.perf_counter()
        with CaptureQueriesContext(connection) as captured:
            counts = agents_monitor()
        report(f"monitoring sweep {n + 1}", seconds=time.perf_counter() - started, cpu_s=_cpu() - cpu,
               queries=len(captured), **counts)


def _dashboard_data(agent_ids: list[list[str]]) -> None:
    """What the panels read, at a fleet's scale: a month of usage and its rollups, budgets for
    every agent, some agents in trouble, events and failed deliveries."""
    from agents.models import Agent
    from fleet.models import Event

    flat = [a for ids in agent_ids for a in ids]
    Agent.objects.filter(pk__in=flat[::50]).update(status="error", last_error="The container exited with code 1.")
    Agent.objects.filter(pk__in=flat[7::40]).update(status="warning", last_error="The runtime is not ready.")
    Agent.objects.filter(pk__in=flat[3::25]).update(status="stopped")
    seconds = usage_rows_generate(USAGE_ROWS, days=30)
    budgets_create()
    Event.objects.bulk_create(
        (Event(kind="agent.warning", message=f"event {n}", data={}, occurred_at=timezone.now())
         for n in range(20_000)), batch_size=5000)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    report("dashboard data", spend_rows=table_rows("agents_agentspendday"),
           spend_month_rows=table_rows("agents_agentspendmonth"), budgets=table_rows("agents_budget"),
           events=table_rows("fleet_event"), seconds=seconds)


def _dashboard() -> None:
    from console import dashboard, health

    panels = {
        "agents_by_status": dashboard.agents_by_status,
        "agents_needing_attention": dashboard.agents_needing_attention,
        "targets_health": health.targets_health,
        "spend_panel": dashboard.spend_panel,
        "budgets_panel": dashboard.budgets_panel,
        "top_spenders": dashboard.top_spenders,
        "recent_events": dashboard.recent_events,
        "failed_deliveries": dashboard.failed_deliveries,
    }
    for name, panel in panels.items():
        with CaptureQueriesContext(connection) as captured:
            panel()
        timing = measure(panel, repeat=20, warmup=2)
        report(f"dashboard panel {name}", median_ms=timing.median_ms, p95_ms=timing.p95_ms, queries=len(captured))
    timing = measure(lambda: dashboard.dashboard_callback(None, {}), repeat=10, warmup=1)
    report("dashboard, all panels", median_ms=timing.median_ms, p95_ms=timing.p95_ms)


def main() -> None:
    from agents.backends import registry

    # More reads in flight than docker-py pools connections for: urllib3 says so on every one.
    logging.getLogger("urllib3.connectionpool").setLevel(logging.ERROR)
    agent_ids = [[str(uuid.uuid4()) for _ in range(PER_ENGINE)] for _ in range(ENGINES)]
    if PARTS & {"sampler", "monitoring"}:
        with EngineSim(engines=agent_ids, mode=MODE, delay=DELAY) as sim:
            targets = _fleet(sim, agent_ids)
            kept = _engines_registered(sim, targets)
            try:
                title = f"{ENGINES * PER_ENGINE} agents over {ENGINES} engines, stats reads: {MODE}" + (
                    f" {DELAY * 1000:g} ms" if MODE == "fixed" else " (next 1 s collector tick)")
                if "sampler" in PARTS:
                    _sampler(title)
                if "monitoring" in PARTS:
                    _monitoring()
            finally:
                registry.TARGETS["remote"] = kept
        report("engine simulator", **sim.served)
    else:
        _fleet(None, agent_ids)
    if "dashboard" in PARTS:
        _dashboard_data(agent_ids)
        _dashboard()
