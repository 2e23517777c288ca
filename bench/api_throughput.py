"""Hot read routes: GET /api/agents, GET /api/agents/:id, GET /api/auth/me.

    python -m bench api_throughput      (throwaway database; see bench/__init__.py)

The data is bench.agents_list's: one caller, editor of 50 workspaces, 1,050 agents visible.
For each route:
- in-process (Django test client, DEBUG off): queries per request, median and p95 at one
  client, and the process's own CPU per request (the database server excluded);
- over HTTP: requests/s at 8 concurrent clients against gunicorn with 2 sync workers, started
  here on a free port of 127.0.0.1 with DEBUG off, on the same throwaway database. The load
  comes from `wrk` when it is installed, else from 8 threads with http.client (which then
  competes for the same cores and reads lower).
The list is fetched with Accept-Encoding: gzip, as browsers do; the figures say whether the
answer came compressed. GET /api/agents/:id is measured on a stopped agent (no engine call)
and on a running one, which asks the container engine (backend.inspect) per the spec.
Targets (docs/performance.md): list at most 4 queries, median at most 10 ms, at least 140
requests/s at 8 clients; detail and auth/me at least 1,000 requests/s at 8 clients.
"""

from __future__ import annotations

import http.client
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

CLIENTS = 8
WORKERS = 2
LOAD_SECONDS = 5.0
HOST = "127.0.0.1"  # never anything else: the benchmark loads only the server it started
ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def _start_gunicorn(port: int, log_path: Path) -> subprocess.Popen:
    from django.conf import settings

    env = dict(os.environ)
    # Production-like: DEBUG off (no query log); the same keys, so the bench's tokens verify.
    env.update(DEBUG="false", SECRET_KEY=settings.SECRET_KEY, FLEET_ENCRYPTION_KEYS=settings.FLEET_ENCRYPTION_KEYS)
    command = [
        sys.executable, "-m", "gunicorn", "fleet.wsgi:application", "--bind", f"{HOST}:{port}",
        "--workers", str(WORKERS), "--no-control-socket", "--log-level", "warning",
    ]
    log = log_path.open("wb")
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {server.returncode}; see {log_path}")
        try:
            connection = http.client.HTTPConnection(HOST, port, timeout=2)
            connection.request("GET", "/api/health")
            connection.getresponse().read()
            connection.close()
            return server
        except OSError:
            time.sleep(0.2)
    _stop(server)
    raise RuntimeError(f"gunicorn did not answer within 60 s; see {log_path}")


def _stop(server: subprocess.Popen) -> None:
    server.terminate()
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def _wrk(port: int, path: str, headers: dict[str, str]) -> float:
    header_args = [arg for name, value in headers.items() for arg in ("-H", f"{name}: {value}")]
    out = subprocess.run(
        ["wrk", "-t", "2", "-c", str(CLIENTS), "-d", f"{LOAD_SECONDS:g}s", *header_args, f"http://{HOST}:{port}{path}"],
        capture_output=True, text=True, check=True,
    ).stdout
    if re.search(r"Non-2xx or 3xx responses", out):
        raise RuntimeError(f"{path} answered errors under load:\n{out}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))


def _threads(port: int, path: str, headers: dict[str, str]) -> float:
    deadline = time.monotonic() + LOAD_SECONDS
    counts: list[int] = []
    lock = threading.Lock()

    def client() -> None:
        done = 0
        connection = http.client.HTTPConnection(HOST, port, timeout=30)
        while time.monotonic() < deadline:
            connection.request("GET", path, headers=headers)
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                raise RuntimeError(f"{path} answered {response.status} under load")
            done += 1
            if response.will_close:  # sync workers close after each answer
                connection.close()
                connection = http.client.HTTPConnection(HOST, port, timeout=30)
        connection.close()
        with lock:
            counts.append(done)

    started = time.monotonic()
    with ThreadPoolExecutor(CLIENTS) as pool:
        for future in [pool.submit(client) for _ in range(CLIENTS)]:
            future.result()
    return sum(counts) / (time.monotonic() - started)


def _one_http_answer(port: int, path: str, headers: dict[str, str]) -> tuple[int, str]:
    connection = http.client.HTTPConnection(HOST, port, timeout=30)
    connection.request("GET", path, headers=headers)
    response = connection.getresponse()
    body = response.read()
    connection.close()
    if response.status != 200:
        raise RuntimeError(f"{path} answered {response.status}: {body[:200]!r}")
    return len(body), response.getheader("Content-Encoding") or "identity"


def main() -> None:
    from django.db import connection, reset_queries
    from django.test import Client, override_settings
    from django.test.utils import CaptureQueriesContext

    from accounts.tokens import session_token_issue
    from agents.models import Agent, Status
    from bench import measure, report
    from bench.agents_list import fleet_create

    caller, _, _ = fleet_create()
    stopped = Agent.objects.filter(owner=caller).order_by("created_at").first()
    running = Agent.objects.filter(status=Status.RUNNING).exclude(container_id="").order_by("created_at").first()
    token = session_token_issue(user=caller)
    headers = {"Authorization": f"Bearer {token}"}
    routes = [
        ("GET /api/agents (gzip)", "/api/agents", {**headers, "Accept-Encoding": "gzip"}),
        ("GET /api/agents/:id (stopped, no engine call)", f"/api/agents/{stopped.pk}", headers),
        ("GET /api/agents/:id (running, asks the engine)", f"/api/agents/{running.pk}", headers),
        ("GET /api/auth/me", "/api/auth/me", headers),
    ]

    # In-process: the control plane's own time, one request after another.
    client = Client(HTTP_AUTHORIZATION=headers["Authorization"])
    with override_settings(DEBUG=False):
        for title, path, route_headers in routes:
            encoding = route_headers.get("Accept-Encoding")
            extra = {"HTTP_ACCEPT_ENCODING": encoding} if encoding else {}

            def fetch(path=path, extra=extra):
                response = client.get(path, **extra)
                assert response.status_code == 200, (path, response.status_code, response.content[:200])
                return response

            reset_queries()  # the request resets the log; start empty so the capture's offsets hold
            with CaptureQueriesContext(connection) as captured:
                fetch()
            queries = len(captured.captured_queries)  # now: later requests reset the log it reads
            timing = measure(fetch, repeat=100 if "agents (gzip)" in title else 300, warmup=10)
            cpu_start = time.process_time()
            for _ in range(50):
                fetch()
            cpu_ms = (time.process_time() - cpu_start) / 50 * 1000
            report(f"{title}, in-process, one client", queries=queries,
                   median_ms=timing.median_ms, p95_ms=timing.p95_ms, cpu_ms_per_request=cpu_ms)

    # CONN_HEALTH_CHECKS costs one SELECT 1 per request that reuses a connection (not in the
    # query log): what keeping the protection against dead connections costs.
    connection.ensure_connection()
    health = measure(connection.is_usable, repeat=300, warmup=10)
    report("connection health check (SELECT 1, once per request)", median_ms=health.median_ms, p95_ms=health.p95_ms)

    # Over HTTP, 8 clients against gunicorn with 2 workers.
    load = _wrk if shutil.which("wrk") else _threads
    port = _free_port()
    log_path = ROOT / "var" / "bench_gunicorn.log"
    log_path.parent.mkdir(exist_ok=True)
    server = _start_gunicorn(port, log_path)
    try:
        for title, path, route_headers in routes:
            size, encoding = _one_http_answer(port, path, route_headers)
            _warm_up(port, path, route_headers)
            per_second = load(port, path, route_headers)
            report(f"{title}, gunicorn {WORKERS} workers, {CLIENTS} clients ({load.__name__.strip('_')})",
                   requests_per_s=per_second, body_kb=size / 1024, content_encoding=encoding)
    finally:
        _stop(server)
    try:
        load_average = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load_average = "unknown"
    # Wall-clock figures depend on what else the machine runs: say how loaded it was.
    report("machine", cpus=os.cpu_count(), load_average=load_average)


def _warm_up(port: int, path: str, headers: dict[str, str]) -> None:
    """A few requests per worker first: the first ones import code and open connections."""
    for _ in range(WORKERS * 5):
        _one_http_answer(port, path, headers)
