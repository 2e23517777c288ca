"""The model gateway: what /llm/v1 adds to a model call, the time to first token through Fleet,
small completions per second, and 500 streams held by one web process.

    make bench BENCH_ARGS=model_gateway      (python -m bench model_gateway)

The provider is the tests' loopback fake model (tests/infra/fake_model.py, answering at once).
Fleet's web server runs as the Procfile runs it (`python -m fleet.web`) with ONE worker, so every
call is held by the same process. One agent routed through the gateway with a saved
`openai-compatible` key, a price (1 and 2 USD per million tokens) and a daily budget far above
what the bench spends, so every call takes the whole path: its token, its budget (after its
first calls, against the web process's allowance: model_gateway/allowances.py), the forward, the
provider's figures read, the settlement (a usage event, the reservation released or taken off the
allowance, the hour's traffic counted). The client is this process: aiohttp, one
event loop.

Figures (sizes by environment, defaults in brackets):
- added latency: BENCH_MODEL_GATEWAY_CALLS [1000] small non-streamed completions one at a time
  for the agent with its budget and for a second agent without one (no reservation, no allowance),
  each followed by one straight to the fake model, the two agents in turn (not one after the
  other: the first series ran on a machine a few tenths of a millisecond slower), on
  kept-alive connections: p50, p99 and the difference (goal: under 2 ms added at p50).
- time to first token: BENCH_MODEL_GATEWAY_STREAMS_TIMED [100] streamed completions, the time
  to the first chunk with content, both ways.
- throughput: small completions through Fleet with 32 in flight for BENCH_MODEL_GATEWAY_SECONDS
  [5] s: calls per second, and the web process's CPU seconds per call.
- held streams: BENCH_MODEL_GATEWAY_HELD [500] streamed completions through Fleet at once, the
  fake model holding each after its first chunk; RSS and PSS of the server's processes before
  and while held (per stream), the process's CPU while they wait, then all finished: how many
  were metered.
"""

from __future__ import annotations

import asyncio
import os
import time

from bench import _procfs as procfs
from bench import report
from bench._servers import Server

CALLS = int(os.environ.get("BENCH_MODEL_GATEWAY_CALLS", 1000))
STREAMS_TIMED = int(os.environ.get("BENCH_MODEL_GATEWAY_STREAMS_TIMED", 100))
SECONDS = float(os.environ.get("BENCH_MODEL_GATEWAY_SECONDS", 5))
HELD = int(os.environ.get("BENCH_MODEL_GATEWAY_HELD", 500))
IN_FLIGHT = 32
WARM_UP = 100  # calls of each agent before the timed ones
BODY = {"model": "fleet-fake-1", "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 64}


def percentile_ms(seconds: list[float], share: float) -> float:
    ordered = sorted(seconds)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] * 1000


def _routed_agent(fake_model, *, name: str = "bench-gateway", budget: bool = True) -> str:
    """The token of an agent routed through the gateway to the fake model, as the gateway's tests
    make one (tests/model_gateway/support.py), with a daily budget far above the bench's spend."""
    from accounts.models import User
    from agents.models import Agent, Budget
    from tests.model_gateway.support import price, route_through_gateway

    owner = User.objects.create_user(email=f"{name}@example.com", password="x" * 20)
    agent = Agent.objects.create(name=name, owner=owner, status="running", runtime_family="hermes",
                                 deploy_target="docker", execution_target_id="docker",
                                 gateway_token=f"{name}-token-0123456789abcdefghijklmnop")
    price(fake_model.model_id)
    if budget:
        Budget.objects.create(agent=agent, period="daily", limit_micros=10**12)
    return route_through_gateway(agent, base_url=fake_model.base_url, model=fake_model.model_id).token


async def _call(session, url: str, headers: dict, body: dict) -> float:
    started = time.perf_counter()
    async with session.post(url, json=body, headers=headers) as response:
        await response.read()
        if response.status != 200:
            raise RuntimeError(f"{url} answered {response.status}: {await response.text()}")
    return time.perf_counter() - started


async def _first_token(session, url: str, headers: dict) -> float:
    started = time.perf_counter()
    async with session.post(url, json={**BODY, "stream": True}, headers=headers) as response:
        if response.status != 200:
            raise RuntimeError(f"{url} answered {response.status}: {await response.text()}")
        async for line in response.content:
            if b'"content"' in line:
                elapsed = time.perf_counter() - started
                await response.read()
                return elapsed
    raise RuntimeError("a stream ended without content")


async def added_latency(session, fleet: str, direct: str, agents: dict[str, dict]) -> None:
    """Each agent's calls (`agents`: title -> headers) and the direct ones in turn, call by call,
    so that whatever the machine does meanwhile weighs on every series alike."""
    for _ in range(WARM_UP):
        for headers in agents.values():
            await _call(session, fleet, headers, BODY)
    through: dict[str, list[float]] = {title: [] for title in agents}
    straight: dict[str, list[float]] = {title: [] for title in agents}
    for _ in range(CALLS):
        for title, headers in agents.items():
            through[title].append(await _call(session, fleet, headers, BODY))
            straight[title].append(await _call(session, direct, {}, BODY))
    for title in agents:
        f50, f99, d50, d99 = (percentile_ms(through[title], 0.5), percentile_ms(through[title], 0.99),
                              percentile_ms(straight[title], 0.5), percentile_ms(straight[title], 0.99))
        report(title, n=CALLS, direct_p50_ms=d50, direct_p99_ms=d99, fleet_p50_ms=f50, fleet_p99_ms=f99,
               added_p50_ms=f50 - d50, added_p99_ms=f99 - d99)


async def time_to_first_token(session, fleet: str, direct: str, headers: dict) -> None:
    through, straight = [], []
    for _ in range(STREAMS_TIMED):
        through.append(await _first_token(session, fleet, headers))
        straight.append(await _first_token(session, direct, {}))
    report("time to first token", n=STREAMS_TIMED, direct_p50_ms=percentile_ms(straight, 0.5),
           fleet_p50_ms=percentile_ms(through, 0.5), direct_p99_ms=percentile_ms(straight, 0.99),
           fleet_p99_ms=percentile_ms(through, 0.99))


async def throughput(session, server: Server, fleet: str, headers: dict) -> None:
    done = 0
    deadline = time.perf_counter() + SECONDS

    async def worker() -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await _call(session, fleet, headers, BODY)
            done += 1

    cpu_before = procfs.cpu_seconds(server.pids())
    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))
    elapsed = time.perf_counter() - started
    cpu = procfs.cpu_spent(cpu_before, procfs.cpu_seconds(server.pids()))
    report("small completions", in_flight=IN_FLIGHT, calls=done, per_second=done / elapsed,
           web_cpu_ms_per_call=cpu * 1000 / max(1, done))


def _metered() -> int:
    from django.db import connection

    from agents.models import RateSource, UsageEvent

    try:
        return UsageEvent.objects.filter(rate_source=RateSource.GATEWAY).count()
    finally:
        connection.close()  # this thread's: the database is dropped after the bench


async def _settled() -> int:
    """The count of metered calls once no settlement is pending (it stopped growing)."""
    last = -1
    while (count := await asyncio.to_thread(_metered)) != last:
        last = count
        await asyncio.sleep(1)
    return count


async def held_streams(session, server: Server, fake_model, fleet: str, headers: dict) -> None:
    metered_before = await _settled()
    rss_before, pss_before = procfs.memory_mb(server.pids())
    fake_model.pause_streams()
    first_chunks = asyncio.Queue()

    async def hold() -> None:
        async with session.post(fleet, json={**BODY, "stream": True},
                                headers=headers) as response:
            await response.content.readline()
            await first_chunks.put(1)
            await response.read()

    started = time.perf_counter()
    tasks = [asyncio.create_task(hold()) for _ in range(HELD)]
    for _ in range(HELD):
        await asyncio.wait_for(first_chunks.get(), timeout=120)
    opened_s = time.perf_counter() - started
    cpu_before = procfs.cpu_seconds(server.pids())
    await asyncio.sleep(3)
    idle_cpu = procfs.cpu_spent(cpu_before, procfs.cpu_seconds(server.pids()))
    rss_held, pss_held = procfs.memory_mb(server.pids())
    fake_model.finish_streams()
    await asyncio.gather(*tasks)
    finished = time.perf_counter()
    while await asyncio.to_thread(_metered) - metered_before < HELD and time.perf_counter() - finished < 60:
        await asyncio.sleep(0.5)
    settled_s = time.perf_counter() - finished
    metered = await asyncio.to_thread(_metered) - metered_before
    report(f"{HELD} streams held by one web process", open_seconds=opened_s, rss_before_mb=rss_before,
           rss_added_mb=rss_held - rss_before, pss_before_mb=pss_before, pss_added_mb=pss_held - pss_before,
           pss_kb_per_stream=(pss_held - pss_before) * 1024 / HELD, cpu_while_waiting_s=idle_cpu,
           metered=metered, all_settled_after_s=settled_s)


async def _run(server: Server, fake_model, token: str, uncapped_token: str) -> None:
    import aiohttp

    fleet = server.url("/llm/v1/chat/completions")
    direct = f"{fake_model.base_url}/chat/completions"
    headers = {"Authorization": f"Bearer {token}"}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0),
                                     timeout=aiohttp.ClientTimeout(total=300)) as session:
        await added_latency(session, fleet, direct, {
            "a call, the agent with a budget": headers,
            "a call, the agent without a budget": {"Authorization": f"Bearer {uncapped_token}"}})
        await time_to_first_token(session, fleet, direct, headers)
        await throughput(session, server, fleet, headers)
        await held_streams(session, server, fake_model, fleet, headers)


def main() -> None:
    from tests.infra.fake_model import FakeModel

    report("machine", hardware=procfs.hardware(), python_loop_ms=procfs.python_speed_ms(), load=procfs.load())
    fake_model = FakeModel().start()
    server = Server("granian", workers=1, env={"OUTBOUND_ALLOWED_HOSTS": "127.0.0.1", "LOG_LEVEL": "WARNING",
                                               "STREAM_LIMIT_TOTAL": str(4 * HELD)})
    try:
        token = _routed_agent(fake_model)
        uncapped = _routed_agent(fake_model, name="bench-gateway-uncapped", budget=False)
        asyncio.run(_run(server, fake_model, token, uncapped))
    finally:
        server.stop()
        fake_model.stop()
