"""A loopback server that speaks the Docker Engine API for simulated containers: many engines
of many containers each, for the scale benches only (never the correctness tests, which use a
real engine). It answers what Fleet's sampler and monitoring sweep ask an engine, with payloads
shaped as Docker 20.10 sends them (API 1.41: inspect, list, one-shot and two-sample stats,
version, info, ping), and answers the runtimes' readiness (`/readyz`, `/health`) on loopback
ports that stand for the containers' gateways.

It runs in a process of its own (uvloop, one event loop for every engine) so its CPU is not the
control plane's. Stats reads wait as a real engine makes them wait:

- `collector` (the default): until the engine's next collector tick, every `period` seconds
  (1 s). Measured on this machine's engine (Docker 20.10.24, 2026-11-29): a one-shot read takes
  1.0 s, ten at once also 1.0 s in all, a two-sample read 2.0 s, an inspect 0.3 ms. Engines
  before 25.0 behave so.
- `fixed`: a fixed delay per read (`delay`, seconds), as engines since 25.0 answer at once.

    with EngineSim(engines=[[agent_id, ...], ...], mode="collector") as sim:
        sim.socket_of(0)         # "unix:///tmp/.../engine-0.sock"
        sim.container_id(0, 7)   # the id of engine 0's container 7
        sim.gateway_ports[7]     # where container 7's runtime answers (of any engine: one address)
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from urllib.parse import parse_qs, unquote, urlsplit

HOST = "127.0.0.1"  # never anything else
API_VERSION = "1.41"
ENGINE_VERSION = "20.10.24-sim"
COLLECTOR_PERIOD = 1.0
NCPU = 2
MB = 1024 * 1024


def container_id(engine: int, n: int) -> str:
    return hashlib.sha256(f"fleet-sim-{engine}-{n}".encode()).hexdigest()


def _docker_time(epoch: float) -> str:
    whole = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch))
    return f"{whole}.{int(epoch % 1 * 1e9):09d}Z"


@dataclass
class _Container:
    id: str
    name: str
    agent_id: str
    port: int
    started: float
    busy: float  # the share of one CPU it uses


class _Engine:
    def __init__(self, index: int, agent_ids: list[str], ports: list[int], mode: str, delay: float):
        self.index, self.mode, self.delay = index, mode, delay
        self.booted = time.time() - 3600
        self.phase = (index * 0.137) % COLLECTOR_PERIOD  # engines do not tick together
        self.containers = {}
        for n, agent_id in enumerate(agent_ids):
            cid = container_id(index, n)
            self.containers[cid] = _Container(cid, f"fleet-sim-{index}-{n}", agent_id, ports[n % len(ports)],
                                              self.booted + n, busy=(n % 7) / 10)
        self.by_name = {c.name: c for c in self.containers.values()}
        self.requests = 0

    # -- payloads ---------------------------------------------------------------------------------

    def _labels(self, c: _Container) -> dict:
        return {"fleet.agent_id": c.agent_id, "fleet.managed": "true", "fleet.host_port": str(c.port)}

    def inspect(self, c: _Container) -> dict:
        return {
            "Id": c.id, "Created": _docker_time(c.started - 1), "Path": "node", "Args": ["gateway"],
            "State": {"Status": "running", "Running": True, "Paused": False, "Restarting": False,
                      "OOMKilled": False, "Dead": False, "Pid": 4242, "ExitCode": 0, "Error": "",
                      "StartedAt": _docker_time(c.started), "FinishedAt": "0001-01-01T00:00:00Z"},
            "Image": "sha256:" + "0" * 64, "Name": "/" + c.name, "RestartCount": 0, "Driver": "overlay2",
            "HostConfig": {"Memory": 2048 * MB, "NanoCpus": 1_000_000_000, "NetworkMode": "host",
                           "RestartPolicy": {"Name": "unless-stopped", "MaximumRetryCount": 0}},
            "Mounts": [{"Type": "volume", "Name": f"fleet-agent-{c.agent_id.replace('-', '')}-state",
                        "Destination": "/state", "RW": True}],
            "Config": {"Hostname": c.name[:12], "User": "10001:10001", "Env": ["OPENCLAW_GATEWAY_PORT=18789"],
                       "Image": "fleet/openclaw:2026.9.6", "Labels": self._labels(c)},
            "NetworkSettings": {"Networks": {"host": {"NetworkID": "1" * 64}}},
        }

    def summary(self, c: _Container) -> dict:
        return {"Id": c.id, "Names": ["/" + c.name], "Image": "fleet/openclaw:2026.9.6",
                "ImageID": "sha256:" + "0" * 64, "Command": "node gateway", "Created": int(c.started - 1),
                "Ports": [], "Labels": self._labels(c), "State": "running",
                "Status": "Up About an hour", "HostConfig": {"NetworkMode": "host"}}

    def _cpu(self, c: _Container, at: float) -> dict:
        system_ns = int((at - self.booted) * NCPU * 1e9)
        used_ns = int((at - c.started) * c.busy * 1e9)
        return {"cpu_usage": {"total_usage": used_ns, "percpu_usage": [used_ns // 2, used_ns - used_ns // 2],
                              "usage_in_kernelmode": used_ns // 5, "usage_in_usermode": used_ns - used_ns // 5},
                "system_cpu_usage": system_ns, "online_cpus": NCPU,
                "throttling_data": {"periods": 0, "throttled_periods": 0, "throttled_time": 0}}

    def stats(self, c: _Container, *, one_shot: bool) -> dict:
        now = time.time()
        empty_cpu = {"cpu_usage": {"total_usage": 0, "usage_in_kernelmode": 0, "usage_in_usermode": 0},
                     "throttling_data": {"periods": 0, "throttled_periods": 0, "throttled_time": 0}}
        usage = (180 + (c.port % 50)) * MB
        return {
            "read": _docker_time(now), "preread": "0001-01-01T00:00:00Z" if one_shot else _docker_time(now - 1),
            "pids_stats": {"current": 11}, "num_procs": 0, "storage_stats": {},
            "blkio_stats": {"io_service_bytes_recursive": [
                {"major": 254, "minor": 0, "op": "Read", "value": 3 * MB},
                {"major": 254, "minor": 0, "op": "Write", "value": 5 * MB}]},
            "cpu_stats": self._cpu(c, now),
            "precpu_stats": empty_cpu if one_shot else self._cpu(c, now - COLLECTOR_PERIOD),
            "memory_stats": {"usage": usage, "max_usage": usage + 8 * MB, "limit": 2048 * MB,
                             "stats": {"cache": 40 * MB, "inactive_file": 12 * MB, "active_file": 28 * MB,
                                       "rss": usage - 40 * MB, "total_cache": 40 * MB}},
            "name": "/" + c.name, "id": c.id,
        }

    async def stats_wait(self, *, one_shot: bool) -> None:
        if self.mode == "fixed":
            await asyncio.sleep(self.delay)
            return
        loop = asyncio.get_running_loop()
        ticks = 1 if one_shot else 2  # a two-sample read waits for a second collector tick
        now = loop.time() - self.phase
        await asyncio.sleep((int(now / COLLECTOR_PERIOD) + ticks) * COLLECTOR_PERIOD - now)

    # -- routes -----------------------------------------------------------------------------------

    async def answer(self, method: str, target: str) -> tuple[int, object]:
        self.requests += 1
        parts = urlsplit(target)
        path = unquote(parts.path)
        if path.startswith("/v1."):
            path = path[path.index("/", 1):]
        query = parse_qs(parts.query)
        if path == "/_ping":
            return 200, "OK"
        if path == "/version":
            return 200, {"Version": ENGINE_VERSION, "ApiVersion": API_VERSION, "MinAPIVersion": "1.12",
                         "Os": "linux", "Arch": "amd64", "KernelVersion": "6.18", "GoVersion": "go1.19.8"}
        if path == "/info":
            return 200, {"Name": f"sim-engine-{self.index}", "NCPU": NCPU, "MemTotal": 23 * 1024 * MB,
                         "Containers": len(self.containers), "ContainersRunning": len(self.containers),
                         "ServerVersion": ENGINE_VERSION}
        if path == "/containers/json":
            return 200, [self.summary(c) for c in self._filtered(query)]
        if path.startswith("/containers/") and method == "GET":
            ref, _, action = path[len("/containers/"):].partition("/")
            c = self.containers.get(ref) or self.by_name.get(ref.lstrip("/"))
            if c is None:
                return 404, {"message": f"No such container: {ref}"}
            if action == "json":
                return 200, self.inspect(c)
            if action == "stats":
                one_shot = query.get("one-shot", ["0"])[0] in ("1", "true", "True")
                await self.stats_wait(one_shot=one_shot)
                return 200, self.stats(c, one_shot=one_shot)
        return 404, {"message": f"page not found: {method} {path}"}

    def _filtered(self, query: dict) -> list[_Container]:
        filters = json.loads(query.get("filters", ["{}"])[0] or "{}")
        wanted = filters.get("label") or []
        wanted = list(wanted) if isinstance(wanted, list) else [k for k, v in wanted.items() if v]
        result = []
        for c in self.containers.values():
            labels = self._labels(c)
            if all(labels.get(k) == v if v else k in labels for k, _, v in (w.partition("=") for w in wanted)):
                result.append(c)
        return result


class _Http(asyncio.Protocol):
    """HTTP/1.1 with keep-alive, as much of it as docker-py, aiohttp and requests use."""

    def __init__(self, handler):
        self.handler = handler
        self.buffer = b""
        self.transport = None
        self.queue: asyncio.Queue = asyncio.Queue()
        self.worker = None

    def connection_made(self, transport):
        self.transport = transport
        self.worker = asyncio.ensure_future(self._serve())

    def connection_lost(self, exc):
        self.worker.cancel()

    def data_received(self, data):
        self.buffer += data
        while True:
            head_end = self.buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = self.buffer[:head_end].decode("latin-1").split("\r\n")
            length = 0
            for line in head[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            if len(self.buffer) < head_end + 4 + length:
                return
            self.buffer = self.buffer[head_end + 4 + length:]
            method, target, _ = head[0].split(" ", 2)
            self.queue.put_nowait((method, target))

    async def _serve(self):
        # Answers in order on one connection (HTTP/1.1 has no multiplexing).
        while True:
            method, target = await self.queue.get()
            status, body = await self.handler(method, target)
            text = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            kind = "text/plain" if isinstance(body, str) else "application/json"
            reason = {200: "OK", 404: "Not Found"}.get(status, "Error")
            self.transport.write(
                f"HTTP/1.1 {status} {reason}\r\nApi-Version: {API_VERSION}\r\nContent-Type: {kind}\r\n"
                f"Content-Length: {len(text)}\r\nServer: Docker/{ENGINE_VERSION} (linux)\r\n\r\n".encode() + text
            )


async def _runtime(method: str, target: str) -> tuple[int, object]:
    path = urlsplit(target).path
    if path == "/readyz":
        return 200, {"ready": True, "failing": []}
    if path == "/health":
        return 200, {"ok": True, "status": "live"}
    return 404, {"error": "not found"}


def _serve(folder: str, engines: list[list[str]], ports_wanted: int, mode: str, delay: float) -> None:
    """The child process: serve until stdin closes, then print what was served."""
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass

    async def main():
        loop = asyncio.get_running_loop()
        runtime_sockets = []
        for _ in range(ports_wanted):
            sock = socket.socket()
            sock.bind((HOST, 0))
            runtime_sockets.append(sock)
        ports = [sock.getsockname()[1] for sock in runtime_sockets]
        servers = [await loop.create_server(lambda: _Http(_runtime), sock=sock, backlog=512)
                   for sock in runtime_sockets]  # kept: a server nothing refers to is closed
        sims = [_Engine(k, ids, ports, mode, delay) for k, ids in enumerate(engines)]
        for sim in sims:
            path = os.path.join(folder, f"engine-{sim.index}.sock")
            servers.append(await loop.create_unix_server(lambda sim=sim: _Http(sim.answer), path=path, backlog=1024))
        print(json.dumps(ports), flush=True)
        stop = asyncio.Event()
        loop.add_reader(sys.stdin.fileno(), stop.set)  # the parent closed our stdin (or wrote to it)
        await stop.wait()
        print(json.dumps({"requests": sum(s.requests for s in sims), "cpu_seconds": time.process_time()}), flush=True)

    asyncio.run(main())


class EngineSim:
    """The simulated engines in a process of their own; a context manager."""

    def __init__(self, *, engines: list[list[str]], mode: str = "collector", delay: float = 0.003):
        self.engines = engines
        self.folder = tempfile.mkdtemp(prefix="fleet-engine-sim-")
        config = os.path.join(self.folder, "engines.json")
        with open(config, "w") as out:
            json.dump({"engines": engines, "mode": mode, "delay": delay}, out)
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        self._process = subprocess.Popen([sys.executable, "-m", "bench._engine_sim", config], cwd=root,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self._process.stdout.readline()
        if not line:
            self.close()
            raise RuntimeError("the engine simulator did not start")
        self.gateway_ports: list[int] = json.loads(line)
        self.served: dict = {}

    def socket_of(self, engine: int) -> str:
        return f"unix://{self.folder}/engine-{engine}.sock"

    def container_id(self, engine: int, n: int) -> str:
        return container_id(engine, n)

    def close(self) -> None:
        """Stop the simulator; `served` then holds its request count and CPU seconds."""
        if self._process.poll() is None:
            try:
                out, _ = self._process.communicate(timeout=10)  # closes its stdin: the signal to stop
                self.served = json.loads(out.strip().splitlines()[-1]) if out.strip() else {}
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> EngineSim:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


if __name__ == "__main__":
    with open(sys.argv[1]) as config_file:
        setup = json.load(config_file)
    _serve(os.path.dirname(sys.argv[1]), setup["engines"], max(len(ids) for ids in setup["engines"]),
           setup["mode"], setup["delay"])
