"""Gateway calls: OpenClaw's handshake plus one call, one after another and 50 agents at once,
the memory of holding 1,000 idle connections (docs/patterns.md: the listener holds one
per running agent), and the same 1,000 held by the gateway listener's supervisor.

    DATABASE_URL=postgres://... .venv/bin/python -m bench gateway_calls

The other end is the loopback protocol-4 server of bench/_gateway_sim.py in its own process (so
its CPU and memory are not counted here): OpenClaw's handshake, checked as OpenClaw checks it,
and every request answered at once. A refused handshake is counted, so a figure never hides a
client that fails.

Figures: the sync facade (`OpenClawGateway.channels_status()`: a private event loop, connect,
handshake, one call, close), the same on one event loop (what a listener or an async worker
pays), both sequential and with 50 agents at once (50 threads for the facade, 50 tasks on one
loop), the resident memory this process adds per idle authenticated connection, and what the
listener's Supervisor adds on top (its links, worker threads, and the database reads behind each
connect) holding 1,000 agent rows whose gateway is the loopback server, wanted by one hook.
"""

from __future__ import annotations

import asyncio
import logging
import os
import resource
import secrets
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleet.settings")

from bench import measure, report  # noqa: E402
from bench._gateway_sim import loopback_gateways  # noqa: E402

TOKEN = secrets.token_urlsafe(32)
SEQUENTIAL = 200
CONCURRENT_AGENTS = 50
CONCURRENT_CALLS = 1_000
IDLE_CONNECTIONS = 1_000


# --- the client (this process) -----------------------------------------------------------------


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _gateway(port: int):
    from agents.families import OPENCLAW
    from agents.gateway import Endpoint, OpenClawGateway
    from agents.gateway.device import installation_device

    endpoint = Endpoint(family=OPENCLAW, scheme="http", host="127.0.0.1", port=port, token=TOKEN, agent_id="bench")
    return OpenClawGateway(endpoint, installation_device())


async def _one_call(gateway) -> dict:
    from agents.gateway.protocol import READ

    async with gateway.connection([READ]) as connection:
        return await connection.call("channels.status")


def _sequential(gateway) -> None:
    facade = measure(gateway.channels_status, repeat=SEQUENTIAL, warmup=10)
    report("sequential, sync facade (loop + connect + handshake + call + close)",
           median_ms=facade.median_ms, p95_ms=facade.p95_ms, calls_per_s=facade.per_second)

    async def timed_on_one_loop() -> list[float]:
        seconds = []
        for n in range(SEQUENTIAL + 10):
            started = time.perf_counter()
            await _one_call(gateway)
            if n >= 10:
                seconds.append(time.perf_counter() - started)
        return seconds

    from bench import Timing

    on_loop = Timing(asyncio.run(timed_on_one_loop()))
    report("sequential, one event loop (connect + handshake + call + close)",
           median_ms=on_loop.median_ms, p95_ms=on_loop.p95_ms, calls_per_s=on_loop.per_second)


def _concurrent(gateway) -> None:
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=CONCURRENT_AGENTS) as pool:
        list(pool.map(lambda _: gateway.channels_status(), range(CONCURRENT_CALLS)))
    elapsed = time.perf_counter() - started
    report(f"{CONCURRENT_AGENTS} agents at once, sync facade in {CONCURRENT_AGENTS} threads",
           calls=CONCURRENT_CALLS, seconds=elapsed, calls_per_s=CONCURRENT_CALLS / elapsed)

    async def gathered() -> float:
        gate = asyncio.Semaphore(CONCURRENT_AGENTS)

        async def limited():
            async with gate:
                await _one_call(gateway)

        began = time.perf_counter()
        await asyncio.gather(*(limited() for _ in range(CONCURRENT_CALLS)))
        return time.perf_counter() - began

    elapsed = asyncio.run(gathered())
    report(f"{CONCURRENT_AGENTS} agents at once, one event loop",
           calls=CONCURRENT_CALLS, seconds=elapsed, calls_per_s=CONCURRENT_CALLS / elapsed)


def _idle_memory(gateway) -> None:
    from agents.gateway.protocol import APPROVALS, READ

    async def hold() -> tuple[float, float, float]:
        before = _rss_mb()
        connections = [gateway.connection([READ, APPROVALS]) for _ in range(IDLE_CONNECTIONS)]
        began = time.perf_counter()
        for batch in range(0, IDLE_CONNECTIONS, 100):  # 100 handshakes at a time
            await asyncio.gather(*(c.open() for c in connections[batch:batch + 100]))
        opened = time.perf_counter() - began
        await asyncio.sleep(1)  # idle: nothing but keepalives
        held = _rss_mb()
        alive = sum(not c.closed for c in connections)
        await asyncio.gather(*(c.close() for c in connections))
        return held - before, opened, alive

    delta, opened, alive = asyncio.run(hold())
    report(f"{IDLE_CONNECTIONS} idle connections held", open_seconds=opened, alive=int(alive), rss_delta_mb=delta,
           kb_per_connection=delta * 1024 / IDLE_CONNECTIONS)


def _listener_memory(port: int) -> None:
    from accounts.models import User
    from agents.gateway import register_listener_hook, unregister_listener_hook
    from agents.gateway.listener import Shard, Supervisor
    from agents.gateway.protocol import APPROVALS, READ
    from agents.models import Agent

    owner = User.objects.create(email="bench-listener@example.com")
    Agent.objects.bulk_create(
        (Agent(name=f"bench-held-{n}", owner=owner, status="running", runtime_family="openclaw", node="bench",
               container_id=f"{n:064x}", gateway_host_port=port, gateway_token=TOKEN) for n in range(IDLE_CONNECTIONS)),
        batch_size=500,
    )
    # The same grant as the idle connections above, so the two figures compare.
    register_listener_hook("bench.held", events={"exec.approval.requested"}, wants=lambda agents: agents,
                           scopes={READ, APPROVALS}, handler=lambda agent_id, event, payload: None)

    async def hold() -> tuple[float, float, int]:
        before = _rss_mb()
        supervisor = Supervisor(shard=Shard(), refresh_seconds=3600)  # one refresh is enough here
        running = asyncio.create_task(supervisor.run(handle_signals=False))
        began = time.perf_counter()
        while sum(link.connected for link in supervisor.links.values()) < IDLE_CONNECTIONS:
            if time.perf_counter() - began > 120 or running.done():
                break
            await asyncio.sleep(0.1)
        opened = time.perf_counter() - began
        await asyncio.sleep(1)  # idle: nothing but keepalives
        held, alive = _rss_mb(), sum(link.connected for link in supervisor.links.values())
        supervisor.stop()
        await running
        return held - before, opened, alive

    quiet = logging.getLogger("agents.gateway.listener")
    level, _ = quiet.level, quiet.setLevel(logging.WARNING)  # not a line per connection
    try:
        delta, opened, alive = asyncio.run(hold())
    finally:
        quiet.setLevel(level)
        unregister_listener_hook("bench.held")
    report(f"{IDLE_CONNECTIONS} agents held by the listener's supervisor", hold_seconds=opened, alive=alive,
           rss_delta_mb=delta, kb_per_agent=delta * 1024 / IDLE_CONNECTIONS)


def main() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
    with loopback_gateways(TOKEN) as servers:
        port = servers.ports[0]
        gateway = _gateway(port)
        _sequential(gateway)
        _concurrent(gateway)
        _idle_memory(gateway)
        _listener_memory(port)
        report("handshakes the server refused (must be 0)", refused=servers.refused)


if __name__ == "__main__":
    import django

    django.setup()
    main()
