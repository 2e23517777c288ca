"""The async edge: what the gateway proxy adds to a request, WebSocket frames through
its relay, the memory of idle WebSockets and idle event streams held by one web process, and the
first delta of a chat turn through Fleet, each against the runtime straight.

    make bench BENCH_ARGS=edge       (python -m bench edge; under `flock /tmp/fleet-heavy.lock`
                                      on a machine whose test suites share the Docker engine)

The runtimes are the real images on a Docker engine (BENCH_DOCKER_HOST, else
FLEET_TEST_DOCKER_HOST, else unix:///run/fleet-docker/docker.sock; images FLEET_TEST_HERMES_IMAGE
and FLEET_TEST_OPENCLAW_IMAGE, else the tests' defaults), started as the tests start them
(tests/infra/runtime_containers.py) on the tests' loopback fake model (tests/infra/fake_model.py):
first Hermes, then OpenClaw, one at a time, each removed once its figures are printed
(BENCH_EDGE_RUNTIMES ["hermes,openclaw"] picks them). Fleet's web server runs as the Procfile
runs it (`python -m fleet.web`, bench/_servers.py) with ONE worker, so every socket is held by
the same process, with the stream caps raised through its environment (STREAM_LIMIT_PER_USER,
STREAM_LIMIT_TOTAL, GATEWAY_PROXY_SOCKETS_PER_USER); a fresh one per phase (Hermes, OpenClaw,
the loopback server below), so the heap one phase's streams left does not hide the next
phase's memory. The client is this process: aiohttp, one event loop. Agents are rows pointing
at the containers, owned by one user, who calls with a session token (Bearer) and holds the
proxy cookie.

Figures (sizes by environment, defaults in brackets):
- proxy added latency: GET `/` of OpenClaw's Control UI (its HTML, 18 KB) and Hermes' `/health`,
  one at a time on kept-alive connections, BENCH_EDGE_REQUESTS [300] each, through the agent's
  proxy origin (Host `<agent-id>.gw.localhost:<port>`, the cookie from POST
  /api/agents/:id/gateway/session and its ticket) and straight to the runtime's port (with the
  auth Fleet adds), alternated: p50 and p99 of each and their difference (what the proxy adds:
  its access check in the Django thread, the relay, the token scrubber).
- WebSocket relay: OpenClaw's protocol 4 as its Control UI speaks it (client
  `openclaw-control-ui`, mode `webchat`, the gateway's version and build id), through the proxy
  (the relay rewrites the connect) and straight to the runtime (the bench signs its connect). A
  frame here is one request `{type:"req", method: BENCH_EDGE_WS_METHOD ["health"]}` up and its
  `res` down, after the handshake: round trips one at a time (p50, p99), then BENCH_EDGE_FRAMES
  [2,000] requests with 16 in flight: responses per second. OpenClaw's own work per request is
  in both figures.
- idle streams, each held by the one worker, with RSS and PSS of the server's processes (master
  and worker) after a warm-up and while held, per stream, the time to open them (50 at a time,
  BENCH_EDGE_OPEN_AT_ONCE; WebSockets 16 at a time: OpenClaw answers 503 past 32 sockets in
  their handshake) and how many were still open after BENCH_EDGE_HOLD_SECONDS [5]:
  BENCH_EDGE_IDLE [1,000] followed logs (SSE, `tail=0`) of the quiet Hermes container;
  BENCH_EDGE_IDLE_OPENCLAW [200] WebSockets through the proxy to OpenClaw, each past the
  handshake (a Control UI tab left open; OpenClaw's events to every socket are relayed, and
  held in memory as the relay receives them: more sockets cost OpenClaw itself more than they
  tell about the relay); BENCH_EDGE_IDLE [1,000] WebSockets through the proxy to a loopback
  protocol-4 server in its own process (bench.gateway_calls' server: it answers the handshake
  and then says nothing), the relay's own cost per socket.
- chat first delta: POST /api/agents/:id/chat until its first `delta` event, against Hermes'
  streamed /v1/chat/completions (first chunk with content) and OpenClaw's `chat.send` through
  Fleet's own gateway client in this process (first delta event; no web server), alternated:
  BENCH_EDGE_TURNS [8] turns per runtime and way. The fake model answers at once, so this is
  the runtime's and Fleet's own latency.

The whole run takes about two minutes (OpenClaw alone takes 10 s to start).
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import resource
import secrets
import time
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from bench import _procfs as procfs
from bench import report
from bench._servers import Server

REQUESTS = int(os.environ.get("BENCH_EDGE_REQUESTS", 300))
FRAMES = int(os.environ.get("BENCH_EDGE_FRAMES", 2000))
WS_METHOD = os.environ.get("BENCH_EDGE_WS_METHOD", "health")
IDLE = int(os.environ.get("BENCH_EDGE_IDLE", 1000))
IDLE_OPENCLAW = int(os.environ.get("BENCH_EDGE_IDLE_OPENCLAW", 200))
HOLD_SECONDS = float(os.environ.get("BENCH_EDGE_HOLD_SECONDS", 5))
TURNS = int(os.environ.get("BENCH_EDGE_TURNS", 8))
ENGINE = (os.environ.get("BENCH_DOCKER_HOST") or os.environ.get("FLEET_TEST_DOCKER_HOST")
          or "unix:///run/fleet-docker/docker.sock")
IN_FLIGHT = 16  # pipelined frames
OPEN_AT_ONCE = int(os.environ.get("BENCH_EDGE_OPEN_AT_ONCE", 50))  # idle streams opened concurrently
# OpenClaw answers 503 past 32 sockets still in their handshake (measured on 2026.9.6).
OPENCLAW_OPEN_AT_ONCE = min(OPEN_AT_ONCE, 16)
OPEN_TIMEOUT = 30.0  # one idle stream that takes longer is counted refused
WARM_UP = 20
LABEL = "fleet.bench"
RUNTIMES = os.environ.get("BENCH_EDGE_RUNTIMES", "hermes,openclaw").split(",")
MESSAGE = "Hello from the bench"


# --- figures -----------------------------------------------------------------------------------


def percentile_ms(seconds: list[float], share: float) -> float:
    ordered = sorted(seconds)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))] * 1000


def latencies(title: str, direct: list[float], through: list[float], **extra) -> None:
    d50, d99 = percentile_ms(direct, 0.5), percentile_ms(direct, 0.99)
    f50, f99 = percentile_ms(through, 0.5), percentile_ms(through, 0.99)
    report(title, n=len(through), direct_p50_ms=d50, direct_p99_ms=d99, fleet_p50_ms=f50, fleet_p99_ms=f99,
           added_p50_ms=f50 - d50, added_p99_ms=f99 - d99, **extra)


# --- the setting: runtimes, agent rows, the web server ------------------------------------------


def _engine():
    import docker

    client = docker.DockerClient(base_url=ENGINE, version="auto", timeout=60)
    client.ping()
    return client


def _runtime(engine, family: str, fake_model):
    """The family's runtime, ready and on the fake model (the caller removes it)."""
    from tests.infra.runtime_containers import (
        HERMES_IMAGE,
        OPENCLAW_IMAGE,
        READY_ROUTE,
        hermes_config,
        openclaw_use_model,
        start_container,
        stop_container,
        wait_ready,
    )

    if family == "hermes":
        image = os.environ.get("FLEET_TEST_HERMES_IMAGE") or HERMES_IMAGE
        files = {"/state/config.yaml": hermes_config(fake_model)}
    else:
        image, files = os.environ.get("FLEET_TEST_OPENCLAW_IMAGE") or OPENCLAW_IMAGE, None
    started = time.perf_counter()
    runtime = start_container(engine, family, image, name_prefix=f"fleet-bench-{family}-{os.getpid()}",
                              labels={LABEL: str(os.getpid())}, files=files)
    try:
        wait_ready(runtime, READY_ROUTE[family])
        if family == "openclaw":
            openclaw_use_model(runtime, fake_model)
    except BaseException:
        stop_container(runtime)
        raise
    report(f"{family} {runtime.version or image} ready", seconds=time.perf_counter() - started)
    return runtime


def _agent(owner, runtime):
    """A running agent row of `owner` whose workload is the runtime's container."""
    from agents.models import Agent

    return Agent.objects.create(
        name=f"bench-{runtime.family}", owner=owner, status="running", runtime_family=runtime.family,
        deploy_target="docker", execution_target_id="docker", node="local",
        container_id=runtime.container.id, container_name=runtime.container.name,
        gateway_host_port=runtime.port, gateway_token=runtime.token,
    )


def _server() -> Server:
    # Far above what the bench opens: the user's leases count across processes, and those an
    # earlier phase's server still held when it stopped lapse only after 60 s.
    caps = str(4 * IDLE + 1000)
    return Server("granian", workers=1, env={
        "DOCKER_HOST": ENGINE, "DOCKER_NETWORK_MODE": "host", "LOG_LEVEL": "WARNING",
        "STREAM_LIMIT_PER_USER": caps, "GATEWAY_PROXY_SOCKETS_PER_USER": caps, "STREAM_LIMIT_TOTAL": caps,
    })


class Client:
    """The bench's side: one aiohttp session, no connection limit, cookies by hand."""

    def __init__(self, server: Server, bearer: str):
        import aiohttp

        self.server = server
        self.bearer = {"Authorization": f"Bearer {bearer}"}
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0), cookie_jar=aiohttp.DummyCookieJar(),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=None),
        )

    async def close(self) -> None:
        await self.session.close()

    async def proxy_origin(self, agent) -> tuple[str, str]:
        """(Host, Cookie) of a browser signed into the agent's UI: the link Fleet hands out,
        opened once on the agent's origin."""
        async with self.session.post(self.server.url(f"/api/agents/{agent.pk}/gateway/session"),
                                     headers=self.bearer) as answer:
            if answer.status != 200:
                raise RuntimeError(f"gateway/session answered {answer.status}: {await answer.text()}")
            link = urlsplit((await answer.json())["url"])
        async with self.session.get(self.server.url(f"{link.path}?{link.query}"), headers={"Host": link.netloc},
                                    allow_redirects=False) as answer:
            if answer.status != 302:
                raise RuntimeError(f"the ticket exchange answered {answer.status}: {await answer.text()}")
            return link.netloc, answer.headers["Set-Cookie"].split(";")[0]


# --- 1. the proxy's added latency ----------------------------------------------------------------


async def _timed_get(client: Client, url: str, headers: dict) -> tuple[float, int]:
    started = time.perf_counter()
    async with client.session.get(url, headers=headers, allow_redirects=False) as answer:
        body = await answer.read()
        if answer.status != 200:
            raise RuntimeError(f"GET {url} answered {answer.status}: {body[:300]!r}")
    return time.perf_counter() - started, len(body)


async def proxy_latency(client: Client, agent, runtime, path: str) -> None:
    host, cookie = await client.proxy_origin(agent)
    through = (client.server.url(path), {"Host": host, "Cookie": cookie})
    # Straight to the runtime with the auth Fleet adds on the way.
    direct = (f"{runtime.base_url}{path}", {"Authorization": f"Bearer {runtime.token}"})
    for _ in range(WARM_UP):
        await _timed_get(client, *direct)
        await _timed_get(client, *through)
    direct_s, through_s = [], []
    for _ in range(REQUESTS):
        seconds, _ = await _timed_get(client, *direct)
        direct_s.append(seconds)
        seconds, proxied_size = await _timed_get(client, *through)
        through_s.append(seconds)
    latencies(f"proxy, GET {path} of {runtime.family}, one at a time (direct: the runtime's port)",
              direct_s, through_s, body_bytes=proxied_size)


# --- 2. WebSocket frames through the relay --------------------------------------------------------


BACKEND_CLIENT = {"id": "gateway-client", "mode": "backend", "version": "bench"}  # Fleet's own, as a backend


async def openclaw_socket(client: Client, url: str, headers: dict, token: str, as_client: dict):
    """(socket past its handshake, hello payload): the challenge, a connect as `as_client` signed
    by a device of the bench's (through the proxy the relay puts the agent's token and the
    installation's device in their place: the browser has neither), hello-ok."""
    from agents.gateway.device import DeviceIdentity
    from agents.gateway.protocol import PLATFORM, READ, ROLE, challenge_of, connect_params

    socket = await client.session.ws_connect(url, headers=headers, max_msg_size=0, autoping=True)
    try:
        nonce, ts = challenge_of(json.loads((await socket.receive()).data))
        params = connect_params(token=token, scopes=[READ], caps=[], nonce=nonce, ts=ts, device=None)
        params["client"] = {**as_client, "platform": PLATFORM}
        params["device"] = DeviceIdentity.generate().connect_device(
            client_id=as_client["id"], client_mode=as_client["mode"], role=ROLE, scopes=[READ], token=token,
            nonce=nonce, signed_at=ts, platform=PLATFORM)
        await socket.send_str(json.dumps({"type": "req", "id": "connect", "method": "connect", "params": params}))
        while True:
            message = await socket.receive()
            if not isinstance(message.data, str):
                raise RuntimeError(f"the socket closed during the handshake ({message.type}, {message.extra})")
            frame = json.loads(message.data)
            if frame.get("type") == "res" and frame.get("id") == "connect":
                if not frame.get("ok"):
                    raise RuntimeError(f"connect refused: {frame.get('error')}")
                return socket, frame.get("payload") or {}
    except BaseException:
        await socket.close()
        raise


async def control_ui_client(client: Client, runtime) -> dict:
    """The client OpenClaw's Control UI connects as (its id and mode, and the version and build
    id of the gateway that served it: a UI of another build is told to reload), read from the
    hello a backend connection gets."""
    socket, hello = await openclaw_socket(client, runtime.base_url.replace("http", "ws", 1) + "/", {},
                                          runtime.token, BACKEND_CLIENT)
    await socket.close()
    server = hello.get("server") or {}
    return {"id": "openclaw-control-ui", "mode": "webchat", "version": str(server.get("version") or "control-ui"),
            "buildId": server.get("buildId")}


async def _responses(socket, wanted: int, send_next: Callable[[], Awaitable[None]] | None) -> int:
    """Read until `wanted` responses came (events skipped); the failed ones counted."""
    failed = 0
    for _ in range(wanted):
        while True:
            message = await socket.receive()
            if not isinstance(message.data, str):
                raise RuntimeError(f"the socket ended ({message.type}, {message.extra})")
            frame = json.loads(message.data)
            if frame.get("type") == "res":
                failed += not frame.get("ok")
                break
        if send_next is not None:
            await send_next()
    return failed


async def frame_rates(socket) -> tuple[list[float], float, int]:
    """(one-at-a-time round trips, responses per second with IN_FLIGHT in flight, failed)."""
    counter = 0

    async def send() -> None:
        nonlocal counter
        counter += 1
        await socket.send_str(json.dumps({"type": "req", "id": f"b{counter}", "method": WS_METHOD, "params": {}}))

    failed = 0
    round_trips = []
    for n in range(WARM_UP + REQUESTS):
        started = time.perf_counter()
        await send()
        failed += await _responses(socket, 1, None)
        if n >= WARM_UP:
            round_trips.append(time.perf_counter() - started)

    sent = 0

    async def send_while_wanted() -> None:
        nonlocal sent
        if sent < FRAMES:
            sent += 1
            await send()

    started = time.perf_counter()
    for _ in range(min(IN_FLIGHT, FRAMES)):
        await send_while_wanted()
    failed += await _responses(socket, FRAMES, send_while_wanted)
    return round_trips, FRAMES / (time.perf_counter() - started), failed


async def relay_frames(client: Client, agent, runtime, ui: dict) -> None:
    host, cookie = await client.proxy_origin(agent)
    through, _ = await openclaw_socket(client, client.server.url("/").replace("http", "ws", 1),
                                       {"Host": host, "Cookie": cookie, "Origin": f"http://{host}"}, "", ui)
    # Straight to the runtime as its own page would connect (its origin, the token), else, when
    # OpenClaw wants that browser's device paired first, as Fleet's backend client.
    direct_url = runtime.base_url.replace("http", "ws", 1) + "/"
    try:
        direct, _ = await openclaw_socket(client, direct_url, {"Origin": runtime.base_url}, runtime.token, ui)
        direct_as = "the Control UI's client"
    except RuntimeError as exc:
        if "PAIRING_REQUIRED" not in str(exc):
            raise
        direct, _ = await openclaw_socket(client, direct_url, {}, runtime.token, BACKEND_CLIENT)
        direct_as = "a backend client (a new UI device would need pairing)"
    try:
        direct_trips, direct_rate, direct_failed = await frame_rates(direct)
        through_trips, through_rate, through_failed = await frame_rates(through)
    finally:
        await through.close()
        await direct.close()
    frame = f"request {WS_METHOD!r} up + its response down"
    latencies(f"WebSocket relay, OpenClaw protocol 4, one frame = {frame}, one at a time; direct as {direct_as}",
              direct_trips, through_trips, failed=direct_failed + through_failed)
    report(f"WebSocket relay, the same frames, {IN_FLIGHT} in flight", frames=FRAMES,
           direct_per_s=direct_rate, fleet_per_s=through_rate, fleet_share=f"{through_rate / direct_rate:.0%}")


# --- 3. idle streams held by one process -----------------------------------------------------------


async def _open_many(opener: Callable[[], Awaitable[object]], count: int,
                     at_once: int) -> tuple[list, list[BaseException]]:
    held, failures = [], []
    for first in range(0, count, at_once):
        results = await asyncio.gather(
            *(asyncio.wait_for(opener(), OPEN_TIMEOUT) for _ in range(min(at_once, count - first))),
            return_exceptions=True)
        for result in results:
            (failures if isinstance(result, BaseException) else held).append(result)
    return held, failures


def _why(exc: BaseException) -> str:
    """A refusal in a few words (never the request's headers: they hold the cookie)."""
    status = getattr(exc, "status", None)
    text = getattr(exc, "message", None) or str(exc)
    return f"{type(exc).__name__} {status or ''} {text}".strip()[:200]


async def idle_memory(client: Client, title: str, opener, is_open, closer, at_once: int = OPEN_AT_ONCE,
                      count: int = IDLE, received=None) -> None:
    """Open `count` streams with `opener()`, hold them, and report what the server's processes
    took (and, with `received(stream)` -> (frames, bytes), what came down the streams meanwhile)."""
    warm, _ = await _open_many(opener, WARM_UP, at_once)  # every module a stream needs is imported now
    await asyncio.gather(*(closer(stream) for stream in warm))
    await asyncio.sleep(1)
    pids = client.server.pids()
    rss_before, pss_before = procfs.memory_mb(pids)
    started = time.perf_counter()
    held, failures = await _open_many(opener, count, at_once)
    opened_s = time.perf_counter() - started
    await asyncio.sleep(HOLD_SECONDS)
    rss_after, pss_after = procfs.memory_mb(client.server.pids())
    still_open = sum(1 for stream in held if is_open(stream))
    traffic = {}
    if received is not None:
        counts = await asyncio.gather(*(received(stream) for stream in held))
        traffic = {"frames_received_per_stream": sum(f for f, _ in counts) / max(1, len(held)),
                   "kb_received_per_stream": sum(b for _, b in counts) / 1024 / max(1, len(held))}
    await asyncio.gather(*(closer(stream) for stream in held), return_exceptions=True)
    report(title, opened=len(held), refused=len(failures), open_after_hold=still_open, open_seconds=opened_s,
           processes=len(pids), rss_before_mb=rss_before, rss_added_mb=rss_after - rss_before,
           pss_before_mb=pss_before, pss_added_mb=pss_after - pss_before,
           pss_kb_per_stream=(pss_after - pss_before) * 1024 / max(1, len(held)), **traffic)
    if failures:
        reasons = collections.Counter(_why(exc) for exc in failures)
        report(f"{title}: refusals", **{f"reason_{n}": f"{why} x{count}" for n, (why, count) in
                                        enumerate(reasons.most_common(3), 1)})
    await asyncio.sleep(1)  # the leases are given back before the next figure


async def idle_log_follows(client: Client, agent) -> None:
    url = client.server.url(f"/api/agents/{agent.pk}/logs?tail=0")
    headers = {**client.bearer, "Accept": "text/event-stream"}

    async def follow():
        response = await client.session.get(url, headers=headers)
        if response.status != 200:
            text = await response.text()
            response.release()
            raise RuntimeError(f"the follow answered {response.status}: {text[:300]}")
        await response.content.readline()  # its first line (`retry:`): the stream is on
        return response

    async def close(response) -> None:
        response.close()

    await idle_memory(client, f"{IDLE} idle SSE streams (GET /logs followed, quiet Hermes container)", follow,
                      lambda response: not response.closed and not response.content.at_eof(), close)


async def idle_sockets(client: Client, agent, as_client: dict, title: str, count: int) -> None:
    host, cookie = await client.proxy_origin(agent)
    url = client.server.url("/").replace("http", "ws", 1)
    headers = {"Host": host, "Cookie": cookie, "Origin": f"http://{host}"}

    async def open_one():
        socket, _ = await openclaw_socket(client, url, headers, "", as_client)
        return socket

    async def close(socket) -> None:
        await socket.close()

    async def received(socket) -> tuple[int, int]:
        """The frames that came after the hello, as the client holds them (none is read before)."""
        frames = size = 0
        while True:
            try:
                message = await socket.receive(timeout=0.001)
            except TimeoutError:
                return frames, size
            if not isinstance(message.data, (str, bytes)):
                return frames, size
            frames, size = frames + 1, size + len(message.data)

    await idle_memory(client, title, open_one, lambda socket: not socket.closed, close,
                      at_once=OPENCLAW_OPEN_AT_ONCE, count=count, received=received)


def _loopback_gateway(token: str, port_pipe, stop_event) -> None:
    """bench.gateway_calls' loopback protocol-4 server, in its own process, without a line per socket."""
    import logging

    from bench.gateway_calls import _serve

    logging.getLogger("websockets").setLevel(logging.WARNING)
    _serve(token, port_pipe, stop_event)


def _with_loopback_gateway(owner, server: Server, bearer: str) -> None:
    """IDLE sockets through the proxy to a protocol-4 server that only answers the handshake
    and stays quiet: the relay's own cost per socket, without a runtime's events."""
    import multiprocessing

    from agents.models import Agent
    from bench.gateway_calls import TOKEN

    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    stop = context.Event()
    process = context.Process(target=_loopback_gateway, args=(TOKEN, send, stop), daemon=True)
    process.start()
    try:
        if not receive.poll(30):
            raise RuntimeError("the loopback gateway did not start")
        agent = Agent.objects.create(
            name="bench-loopback", owner=owner, status="running", runtime_family="openclaw", deploy_target="docker",
            execution_target_id="docker", node="local", container_id="0" * 64, gateway_host_port=receive.recv(),
            gateway_token=TOKEN,
        )

        async def run() -> None:
            client = Client(server, bearer)
            try:
                await idle_sockets(client, agent, BACKEND_CLIENT, f"{IDLE} idle WebSockets (proxy relay to a quiet "
                                   "loopback protocol-4 server, past the handshake)", IDLE)
            finally:
                await client.close()

        asyncio.run(run())
    finally:
        stop.set()
        process.join(timeout=10)
        if process.is_alive():
            process.kill()


# --- 4. chat's first delta --------------------------------------------------------------------------


async def _first_line(response, matches: Callable[[str], bool], started: float) -> float:
    """Seconds from `started` to the first line of the body that `matches`; the rest is read."""
    first = None
    async for raw in response.content:
        line = raw.decode().rstrip("\r\n")
        if first is None and matches(line):
            first = time.perf_counter() - started
    if first is None:
        raise RuntimeError("the turn ended without a delta")
    return first


async def fleet_turn(client: Client, agent) -> float:
    started = time.perf_counter()
    async with client.session.post(client.server.url(f"/api/agents/{agent.pk}/chat"), json={"message": MESSAGE},
                                   headers=client.bearer) as response:
        if response.status != 200:
            raise RuntimeError(f"POST /chat answered {response.status}: {await response.text()}")
        return await _first_line(response, lambda line: line == "event: delta", started)


def _has_content(line: str) -> bool:
    if not line.startswith("data: {"):
        return False
    choice = (json.loads(line[6:]).get("choices") or [{}])[0]
    return bool((choice.get("delta") or {}).get("content"))


async def hermes_turn(client: Client, runtime) -> float:
    """The request Fleet's Hermes client makes (agents/gateway/hermes.py), straight to the runtime."""
    body = {"model": "hermes-agent", "stream": True, "messages": [{"role": "user", "content": MESSAGE}]}
    headers = {"Authorization": f"Bearer {runtime.token}", "X-Hermes-Session-Id": f"bench-{secrets.token_hex(8)}",
               "Accept": "text/event-stream"}
    started = time.perf_counter()
    async with client.session.post(f"{runtime.base_url}/v1/chat/completions", json=body,
                                   headers=headers) as response:
        if response.status != 200:
            raise RuntimeError(f"Hermes answered {response.status}: {await response.text()}")
        return await _first_line(response, _has_content, started)


async def openclaw_turn(runtime) -> float:
    """`chat.send` through Fleet's own OpenClaw client, in this process (its connect, handshake,
    the turn), straight to the runtime."""
    from agents.gateway import OpenClawGateway
    from agents.gateway.device import DeviceIdentity

    started = time.perf_counter()
    first = None
    async for event in OpenClawGateway(runtime.endpoint(), DeviceIdentity.generate()).chat(MESSAGE, session_id=None):
        if event.kind == "error":
            raise RuntimeError(f"the turn failed: {event.data}")
        if first is None and event.kind == "delta":
            first = time.perf_counter() - started
    if first is None:
        raise RuntimeError("the turn ended without a delta")
    return first


async def chat_first_delta(client: Client, agent, runtime, direct_way: str) -> None:
    direct_turn = (lambda: hermes_turn(client, runtime)) if runtime.family == "hermes" else (
        lambda: openclaw_turn(runtime))
    await direct_turn()
    await fleet_turn(client, agent)
    direct, through = [], []
    for _ in range(TURNS):
        direct.append(await direct_turn())
        through.append(await fleet_turn(client, agent))
    latencies(f"chat first delta, {runtime.family} (Fleet: POST /chat, SSE; direct: {direct_way})", direct, through)


# --- the run -------------------------------------------------------------------------------------------


async def hermes_figures(client: Client, agent, runtime) -> None:
    await proxy_latency(client, agent, runtime, "/health")
    await chat_first_delta(client, agent, runtime, "its /v1/chat/completions streamed")
    await idle_log_follows(client, agent)


async def openclaw_figures(client: Client, agent, runtime) -> None:
    ui = await control_ui_client(client, runtime)
    await proxy_latency(client, agent, runtime, "/")
    await relay_frames(client, agent, runtime, ui)
    await chat_first_delta(client, agent, runtime, "chat.send by Fleet's gateway client in the bench process")
    await idle_sockets(client, agent, ui, f"{IDLE_OPENCLAW} idle WebSockets (proxy relay to OpenClaw, Control UI "
                       "client past the handshake; OpenClaw's events to each included)", IDLE_OPENCLAW)


def _with_runtime(engine, family: str, fake_model, owner, server: Server, bearer: str, figures) -> None:
    from tests.infra.runtime_containers import stop_container

    runtime = _runtime(engine, family, fake_model)
    try:
        agent = _agent(owner, runtime)

        async def run() -> None:
            client = Client(server, bearer)
            try:
                await figures(client, agent, runtime)
            finally:
                await client.close()

        asyncio.run(run())
    finally:
        stop_container(runtime)


def main() -> None:
    from accounts.models import User
    from accounts.tokens import session_token_issue
    from tests.infra.fake_model import FakeModel

    # Both ends of every idle stream are in this machine's processes: the server's and ours.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8 * IDLE + 1024)), hard))
    report("machine", hardware=procfs.hardware(), python_loop_ms=procfs.python_speed_ms(),
           load_average_before=procfs.load(), requests=REQUESTS, frames=FRAMES, idle=IDLE, turns=TURNS)
    owner = User.objects.create(email="bench-edge@example.com")
    bearer = session_token_issue(user=owner)
    engine = _engine()
    fake_model = FakeModel().start()
    # One runtime at a time (the machine's rule): Hermes' figures, then OpenClaw's, then the
    # loopback server's; each on a web server of its own, started for it, so what one phase's
    # streams left in the heap does not serve the next phase's (its memory figure would shrink).
    phases = [(lambda server, family=family, figures=figures: _with_runtime(
        engine, family, fake_model, owner, server, bearer, figures))
        for family, figures in (("hermes", hermes_figures), ("openclaw", openclaw_figures)) if family in RUNTIMES]
    phases.append(lambda server: _with_loopback_gateway(owner, server, bearer))
    try:
        for phase in phases:
            server = _server()
            try:
                rss, pss = procfs.memory_mb(server.pids())
                report("web server (python -m fleet.web, 1 worker) started", processes=len(server.pids()),
                       rss_mb=rss, pss_mb=pss)
                phase(server)
            finally:
                server.stop()
    finally:
        fake_model.stop()
        engine.close()
    report("machine", load_average_after=procfs.load())
