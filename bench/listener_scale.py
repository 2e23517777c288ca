"""The gateway listener holding 10,000 agents over its shards (issue 32; docs/performance.md).

    DATABASE_URL=postgres://... REDIS_URL=redis://... .venv/bin/python -m bench listener_scale

The listener runs as production runs it: the Procfile's `gateway` line, once per shard, each
process told GATEWAY_LISTENER_SHARDS and its GATEWAY_LISTENER_SHARD, each with its Supervisor,
its links and the apps' real hooks (the sandbox app's approvals hook wants every sandboxed agent,
so the agents here are sandboxed OpenClaw agents, running). Their gateways are the loopback
protocol-4 servers of bench/_gateway_sim.py, in processes of their own, which tick every held
connection every 30 s as OpenClaw does and count the connections they hold past hello-ok: that
count is what "connected" means here.

Printed:
- the shards idle with no agent (the floor each process costs);
- time from starting the shards to all agents held (each shard's first refresh, every agent's
  database read, handshake and first sign of life), and the failed attempts the logs show;
- memory (RSS and PSS of every listener process) idle with all held, and per connection above
  the floor; the PostgreSQL connections the listeners keep;
- CPU of the listeners over an idle window (ticks and keepalives only), as a share of one core;
- one shard SIGKILLed and started again at once (as a process manager would): how many
  connections the servers saw drop, whether the other shards' held, and the time until all are
  back.

Sizes (environment): BENCH_LISTENER_AGENTS (10000), BENCH_LISTENER_SHARDS (4),
BENCH_LISTENER_SERVERS (2 gateway processes), BENCH_LISTENER_IDLE_SECONDS (40: a tick and two
keepalive pings of every connection), BENCH_LISTENER_TICK_SECONDS (30). This process and the
gateways raise their open-files limit to the hard limit; the listeners raise their own
(agents.gateway.listener.fdlimit). Everything stays on 127.0.0.1.
"""

from __future__ import annotations

import os
import resource
import secrets
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bench import report
from bench._gateway_sim import LoopbackGateways, loopback_gateways
from bench._procfs import children_of, cpu_seconds, cpu_spent, load, memory_mb, postgres_backends

ROOT = Path(__file__).resolve().parent.parent
AGENTS = int(os.environ.get("BENCH_LISTENER_AGENTS", "10000"))
SHARDS = int(os.environ.get("BENCH_LISTENER_SHARDS", "4"))
SERVERS = int(os.environ.get("BENCH_LISTENER_SERVERS", "2"))
IDLE_SECONDS = float(os.environ.get("BENCH_LISTENER_IDLE_SECONDS", "40"))
TICK_SECONDS = float(os.environ.get("BENCH_LISTENER_TICK_SECONDS", "30"))
HOLD_TIMEOUT = 300.0
TOKEN = secrets.token_urlsafe(32)


@dataclass
class ShardProcess:
    index: int
    process: subprocess.Popen
    log: Path

    def pids(self) -> list[int]:
        return children_of(self.process.pid)

    def log_count(self, text: str) -> int:
        return self.log.read_text(errors="replace").count(text)

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


def _shard_spawn(index: int, run: str) -> ShardProcess:
    """The Procfile's `gateway` line through a shell, as a platform runs it."""
    from django.conf import settings

    from tests.faults.stack import procfile_command

    log = ROOT / "var" / f"bench_listener_{run}_{index}.log"
    log.parent.mkdir(exist_ok=True)
    environment = {
        **os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT),
        "DEBUG": "false", "SECRET_KEY": settings.SECRET_KEY, "FLEET_ENCRYPTION_KEYS": settings.FLEET_ENCRYPTION_KEYS,
        "GATEWAY_LISTENER_SHARDS": str(SHARDS), "GATEWAY_LISTENER_SHARD": str(index),
    }
    with open(log, "w") as out:
        process = subprocess.Popen(["sh", "-c", procfile_command("gateway")], cwd=ROOT, env=environment,
                                   stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    return ShardProcess(index, process, log)


def _until_started(shards: list[ShardProcess]) -> list[ShardProcess]:
    deadline = time.monotonic() + 60
    for shard in shards:
        while shard.log_count(" started") == 0:
            if shard.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"listener shard {shard.index} did not start; see {shard.log}")
            time.sleep(0.05)
    return shards


def _shards_start(run: str) -> list[ShardProcess]:
    """Every shard at once, as a platform starts a process type's instances."""
    return _until_started([_shard_spawn(index, run) for index in range(SHARDS)])


def _memory(shards: list[ShardProcess]) -> tuple[float, float]:
    return memory_mb([pid for shard in shards for pid in shard.pids()])


def _wait_held(servers: LoopbackGateways, count: int, since: float, marks: dict[float, float] | None = None) -> float:
    """Seconds from `since` until the servers hold `count` connections (inf at the timeout);
    `marks` (share -> None) gets the seconds at which each share of `count` was reached."""
    while time.monotonic() - since < HOLD_TIMEOUT:
        held = servers.held
        for share in marks or {}:
            if marks[share] is None and held >= share * count:
                marks[share] = time.monotonic() - since
        if held >= count:
            return time.monotonic() - since
        time.sleep(0.05)
    return float("inf")


def _agents_create(ports: list[int]) -> list[str]:
    from accounts.models import User
    from agents.gateway.device import installation_device
    from agents.models import Agent

    installation_device()  # created once here, not raced by the shards' first handshakes
    owner = User.objects.create(email="bench-listener-scale@example.com")
    agents = Agent.objects.bulk_create(
        (Agent(name=f"bench-listener-{n}", owner=owner, status="running", runtime_family="openclaw",
               sandbox_profile="nemoclaw", node="bench", container_id=f"{n:064x}",
               gateway_host_port=ports[n % len(ports)], gateway_token=TOKEN) for n in range(AGENTS)),
        batch_size=1000,
    )
    return [str(agent.pk) for agent in agents]


def _idle_floor(servers: LoopbackGateways) -> tuple[float, float]:
    shards = _shards_start("floor")
    try:
        time.sleep(3)
        rss, pss = _memory(shards)
    finally:
        for shard in shards:
            shard.stop()
    report(f"{SHARDS} listener shards idle, no agent", rss_mb=rss, pss_mb=pss, pss_per_shard_mb=pss / SHARDS)
    return rss, pss


def _hold(servers: LoopbackGateways, floor: tuple[float, float], database: str) -> list[ShardProcess]:
    began = time.monotonic()
    shards = _shards_start("held")
    marks = {0.5: None, 0.9: None, 0.99: None}
    held_after = _wait_held(servers, AGENTS, began, marks)
    report(f"{AGENTS} agents over {SHARDS} shards, from starting the shards to all held",
           seconds=held_after, half=marks[0.5], ninety_percent=marks[0.9], ninety_nine_percent=marks[0.99],
           held=servers.held, failed_attempts=sum(shard.log_count("again in") for shard in shards),
           refused=servers.refused)

    time.sleep(5)  # past the burst: the hooks' first writes, the allocator settling
    before = cpu_seconds([pid for shard in shards for pid in shard.pids()])
    time.sleep(IDLE_SECONDS)
    after = cpu_seconds([pid for shard in shards for pid in shard.pids()])
    rss, pss = _memory(shards)
    idle_cpu = cpu_spent(before, after)
    report(f"idle with {servers.held} held ({IDLE_SECONDS:g} s: ticks every {TICK_SECONDS:g} s, keepalives)",
           cpu_seconds=idle_cpu, share_of_one_core_percent=100 * idle_cpu / IDLE_SECONDS,
           rss_mb=rss, pss_mb=pss, pss_per_shard_mb=pss / SHARDS)
    report("per connection, above the shards' floor", rss_kb=(rss - floor[0]) * 1024 / AGENTS,
           pss_kb=(pss - floor[1]) * 1024 / AGENTS,
           postgres_connections=len(postgres_backends(database)), load_average=load())
    return shards


def _kill_one(servers: LoopbackGateways, shards: list[ShardProcess], owned: int) -> None:
    victim = shards[0]
    killed = time.monotonic()
    victim.kill()
    # The servers see the killed shard's sockets close at once (the kernel resets them).
    lowest, deadline = servers.held, time.monotonic() + 10
    while servers.held > AGENTS - owned and time.monotonic() < deadline:
        time.sleep(0.01)
    lowest = min(lowest, servers.held)
    restarted = time.monotonic()
    shards[0] = _until_started([_shard_spawn(0, "restarted")])[0]
    started_in = time.monotonic() - restarted
    back = _wait_held(servers, AGENTS, killed)
    report(f"shard 0 of {SHARDS} SIGKILLed ({owned} agents) and started again at once",
           dropped=AGENTS - lowest, others_kept=lowest >= AGENTS - owned, process_started_s=started_in,
           all_back_after_kill_s=back, failed_attempts=shards[0].log_count("again in"))


def main() -> None:
    from django.db import connection

    from agents.gateway.listener import shard_of

    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
    report("machine", load_average=load(), open_files_limit=resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    with loopback_gateways(TOKEN, processes=SERVERS, tick_seconds=TICK_SECONDS) as servers:
        floor = _idle_floor(servers)
        agent_ids = _agents_create(servers.ports)
        shards = _hold(servers, floor, connection.settings_dict["NAME"])
        try:
            _kill_one(servers, shards, sum(shard_of(agent_id, SHARDS) == 0 for agent_id in agent_ids))
        finally:
            for shard in shards:
                shard.stop()
        report("handshakes the servers refused (must be 0)", refused=servers.refused)
