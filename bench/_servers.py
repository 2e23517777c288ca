"""Web servers a benchmark starts on a free port of 127.0.0.1, each with 2 worker processes
(unless the benchmark asks for another number), DEBUG off, on the benchmark's throwaway
database (os.environ["DATABASE_URL"]); and a server of the same interface started by hand on
this machine (RunningServer: the reference control plane, docs/performance.md)."""

from __future__ import annotations

import http.client
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from bench._procfs import children_of, listening_process

HOST = "127.0.0.1"  # never anything else: a benchmark loads only the servers it started
ROOT = Path(__file__).resolve().parent.parent
WORKERS = 2


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def command(server: str, port: int, root: Path = ROOT, workers: int = WORKERS) -> list[str]:
    """The server as the Procfile's `web` line runs it, on `port`, without an access log."""
    if server == "granian" and not (root / "fleet" / "web.py").exists():  # a checkout from before fleet.web
        return [
            sys.executable, "-m", "granian", "--interface", "wsgi", "--host", HOST, "--port", str(port),
            "--workers", str(workers), "--blocking-threads", "1", "--no-ws", "--log-level", "warning",
            "fleet.wsgi:application",
        ]
    if server == "gunicorn":
        return [
            sys.executable, "-m", "gunicorn", "-c", "python:fleet.gunicorn_conf", "fleet.wsgi:application",
            "--bind", f"{HOST}:{port}", "--workers", str(workers), "--no-control-socket", "--log-level", "warning",
        ]
    if server == "granian":
        return [
            sys.executable, "-m", "fleet.web", "--host", HOST, "--port", str(port), "--workers", str(workers),
            "--log-level", "warning",
        ]
    raise ValueError(f"unknown server {server!r} (gunicorn, granian)")


class _Http:
    port: int

    def get(self, path: str, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
        connection = http.client.HTTPConnection(HOST, self.port, timeout=30)
        try:
            connection.request("GET", path, headers=headers or {})
            response = connection.getresponse()
            response.body = response.read()
            return response
        finally:
            connection.close()

    def url(self, path: str) -> str:
        return f"http://{HOST}:{self.port}{path}"


class Server(_Http):
    """`name` is a server ("granian", "gunicorn"), optionally "@<path>" of another checkout whose
    code it runs (e.g. "gunicorn@/work/main": before and after, on the same database and machine).
    `workers` worker processes; `env` adds to the server's environment (settings of a bench's own)."""

    def __init__(self, name: str, *, workers: int = WORKERS, env: dict[str, str] | None = None):
        from django.conf import settings

        self.name = name
        server, _, checkout = name.partition("@")
        root = Path(checkout).resolve() if checkout else ROOT
        self.port = free_port()
        self.log_path = ROOT / "var" / f"bench_{server}{'_' + root.name if checkout else ''}.log"
        self.log_path.parent.mkdir(exist_ok=True)
        environment = dict(os.environ)
        # Production-like: DEBUG off (no query log); the same keys, so the bench's tokens verify.
        # PYTHONPATH: this checkout's code, whatever else the environment has installed.
        # FLEET_PORT: the port it serves, as the Procfile's web line has it (the proxy's origins name it).
        # Metric files in a folder of the bench's own: the server empties it when it starts.
        self.metrics_dir = ROOT / "var" / f"bench-prometheus-{self.port}"
        environment["PROMETHEUS_MULTIPROC_DIR"] = str(self.metrics_dir)
        environment.update(DEBUG="false", SECRET_KEY=settings.SECRET_KEY, PYTHONPATH=str(root),
                           FLEET_ENCRYPTION_KEYS=settings.FLEET_ENCRYPTION_KEYS, FLEET_PORT=str(self.port),
                           **(env or {}))
        self.process = subprocess.Popen(command(server, self.port, root, workers), cwd=root, env=environment,
                                        stdout=self.log_path.open("wb"), stderr=subprocess.STDOUT)
        self._wait_until_up()

    def _wait_until_up(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}; see {self.log_path}")
            try:
                self.get("/api/health")
                return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"{self.name} did not answer within 60 s; see {self.log_path}")

    def pids(self) -> list[int]:
        return children_of(self.process.pid)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.metrics_dir, ignore_errors=True)


class RunningServer(_Http):
    """A server this bench neither starts nor stops, serving the same interface on 127.0.0.1:
    "running:<port>" in BENCH_SERVERS. Its processes are the one serving the port and its
    descendants (bench._procfs.listening_process; BENCH_RUNNING_PID names the root process
    instead). It holds its own data and callers: BENCH_RUNNING_TOKEN is a bearer session of
    its user who sees its agents, BENCH_RUNNING_AGENT one of its stopped agents, and
    BENCH_RUNNING_DATABASE (optional) the PostgreSQL database whose backends serve it."""

    def __init__(self, name: str):
        self.name = name
        self.port = int(name.removeprefix("running:"))
        missing = [key for key in ("BENCH_RUNNING_TOKEN", "BENCH_RUNNING_AGENT") if not os.environ.get(key)]
        if missing:
            raise RuntimeError(f"{name}: set {' and '.join(missing)} (bench/_servers.py, RunningServer)")
        self.bearer = {"Authorization": f"Bearer {os.environ['BENCH_RUNNING_TOKEN']}"}
        self.agent_id = os.environ["BENCH_RUNNING_AGENT"]
        self.database = os.environ.get("BENCH_RUNNING_DATABASE") or None
        named = os.environ.get("BENCH_RUNNING_PID")
        self.root_pid = int(named) if named else listening_process(self.port)
        if self.root_pid is None:
            raise RuntimeError(f"{name}: nothing listens on {HOST}:{self.port}")

    def pids(self) -> list[int]:
        return children_of(self.root_pid)

    def stop(self) -> None:
        pass  # not the bench's to stop


def server_named(name: str, **options) -> Server | RunningServer:
    """BENCH_SERVERS' word for a server: "granian", "gunicorn", either "@<checkout>", or "running:<port>"."""
    return RunningServer(name) if name.startswith("running:") else Server(name, **options)
