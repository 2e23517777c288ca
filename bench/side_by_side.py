"""Side by side: every figure of issue 19 for the hot reads, over HTTP, with wrk.

    make bench BENCH_ARGS=side_by_side       (python -m bench side_by_side)

The data is bench.agents_list's: one caller, editor of 50 workspaces, 1,050 agents visible.
Each server (BENCH_SERVERS, default "granian,gunicorn"; 2 worker processes each, DEBUG off, as
the Procfile runs them; "gunicorn@/path/to/checkout" runs another checkout's code, for before
and after on the same machine and database) is started once; then BENCH_ROUNDS rounds (default 3) run every
scenario on every server in turn, BENCH_SECONDS each (default 5), so a burst of other work on
a shared machine weighs on every server alike; each figure is the median of the rounds.

Another control plane of the same interface (the reference) runs beside them as
"running:<port>": started by hand on this machine with its own 1,050 agents, called with its
own caller (BENCH_RUNNING_TOKEN, BENCH_RUNNING_AGENT; bench/_servers.py RunningServer). Its
in-process figures are not Fleet's to read, nor its database's CPU unless
BENCH_RUNNING_DATABASE names it; docs/performance.md says how to run it.

Per scenario: requests/s and p50 latency (wrk), CPU per request of the web server's processes
and of the PostgreSQL backends serving this database (from /proc; other databases' work is
not counted), the machine's busy share while it ran. In-process (Django test client, DEBUG
off): queries per request and database time per request (statement round trips, as the web
process waits for them). Memory: the server's processes, resident (RSS, shared pages counted
per process) and proportional (PSS), idle after a warm-up and after the list load.

Targets: the detail at most 0.83 ms web CPU at c=8 (the reference's), me 1 ms; at least 1,200
and 1,500 requests/s; list p50 at most 8 ms at c=1, at least 200 requests/s at c=8, at most 5 ms of
database time; list 304 at least 2,000 requests/s; memory at most 150 MB idle, 220 MB loaded.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import time

from bench import _procfs as procfs
from bench import report
from bench._servers import RunningServer, Server, server_named

SERVERS = [s for s in os.environ.get("BENCH_SERVERS", "granian,gunicorn").split(",") if s]
ROUNDS = int(os.environ.get("BENCH_ROUNDS", 3))
SECONDS = float(os.environ.get("BENCH_SECONDS", 5))


def _wrk(url: str, clients: int, headers: dict[str, str]) -> dict:
    if not shutil.which("wrk"):
        raise RuntimeError("wrk is not installed (apt-get install wrk)")
    header_args = [arg for name, value in headers.items() for arg in ("-H", f"{name}: {value}")]
    out = subprocess.run(
        ["wrk", "--latency", "-t", str(min(clients, 2)), "-c", str(clients), "-d", f"{SECONDS:g}s",
         *header_args, url],
        capture_output=True, text=True, check=True,
    ).stdout
    if "Non-2xx or 3xx responses" in out:
        raise RuntimeError(f"{url} answered errors under load:\n{out}")
    p50 = re.search(r"50%\s+([\d.]+)(us|ms|s)\b", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}[p50.group(2)]
    return {
        "requests": int(re.search(r"(\d+) requests in", out).group(1)),
        "per_second": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "p50_ms": float(p50.group(1)) * scale,
    }


def _run(server: Server | RunningServer, database: str | None, path: str, clients: int,
         headers: dict[str, str]) -> dict:
    web_pids = server.pids()
    web_before = procfs.cpu_seconds(web_pids)
    pg_before = procfs.cpu_seconds(procfs.postgres_backends(database)) if database else {}
    machine_before = procfs.cpu_totals()
    result = _wrk(server.url(path), clients, headers)
    web_spent = procfs.cpu_spent(web_before, procfs.cpu_seconds(web_pids))
    result["web_cpu_ms"] = web_spent * 1000 / result["requests"]
    if database:
        pg_spent = procfs.cpu_spent(pg_before, procfs.cpu_seconds(procfs.postgres_backends(database)))
        result["pg_cpu_ms"] = pg_spent * 1000 / result["requests"]
    result["machine_busy"] = procfs.busy_share(machine_before, procfs.cpu_totals())
    return result


def _in_process(path: str, headers: dict[str, str]) -> dict:
    """Queries and database time per request, through the whole Django stack in this process."""
    from django.db import connection
    from django.test import Client, override_settings

    client = Client(**{"HTTP_" + name.upper().replace("-", "_"): value for name, value in headers.items()})
    spent = []

    def timed(execute, sql, params, many, context):
        start = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            spent.append(time.perf_counter() - start)

    with override_settings(DEBUG=False):
        client.get(path)  # warm
        per_request = []
        for _ in range(20):
            spent.clear()
            with connection.execute_wrapper(timed):
                response = client.get(path)
            assert response.status_code in (200, 304), (path, response.status_code)
            per_request.append((len(spent), sum(spent)))
    return {"queries": statistics.median(q for q, _ in per_request),
            "db_ms": statistics.median(s for _, s in per_request) * 1000}


def _cold_list(headers: dict[str, str]) -> None:
    """GET /api/agents built whole every time (no body cache, no kept rows), in-process: what a
    caller paid after each write before agents.list_rows (bench/agents_list_scale.py times the
    list after a write now), and the database time the list's own queries take."""
    from django.db import connection
    from django.test import Client, override_settings

    client = Client(HTTP_AUTHORIZATION=headers["Authorization"])
    spent = []

    def timed(execute, sql, params, many, context):
        start = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            spent.append(time.perf_counter() - start)

    with override_settings(DEBUG=False, AGENT_LIST_CACHE_MB=0, AGENT_LIST_ROWS_MB=0):
        client.get("/api/agents")
        walls, cpus, dbs, queries = [], [], [], []
        for _ in range(30):
            spent.clear()
            wall, cpu = time.perf_counter(), time.process_time()
            with connection.execute_wrapper(timed):
                assert client.get("/api/agents").status_code == 200
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
            dbs.append(sum(spent))
            queries.append(len(spent))
    report("GET /api/agents built every time (cache off), in-process, one client",
           p50_ms=statistics.median(walls) * 1000, web_cpu_ms_per_request=statistics.median(cpus) * 1000,
           queries=statistics.median(queries), db_ms_per_request=statistics.median(dbs) * 1000)


def _scenarios(server: Server | RunningServer, bearer: dict[str, str], detail: str) -> dict[str, tuple]:
    """{title: (path, clients, headers)} of each scenario, with the server's own caller and agent."""
    scenarios = {
        "GET /api/agents, c=1": ("/api/agents", 1, bearer),
        "GET /api/agents, c=8": ("/api/agents", 8, bearer),
        "GET /api/agents gzip, c=8": ("/api/agents", 8, {**bearer, "Accept-Encoding": "gzip"}),
        "GET /api/agents/:id (stopped), c=8": (detail, 8, bearer),
        "GET /api/auth/me, c=8": ("/api/auth/me", 8, bearer),
    }
    etag = server.get("/api/agents", bearer).getheader("ETag")
    if etag:
        scenarios["GET /api/agents If-None-Match (304), c=8"] = ("/api/agents", 8, {**bearer, "If-None-Match": etag})
    else:
        report(f"{server.name}: GET /api/agents carries no ETag: no 304 scenario")
    return scenarios


def _figures(runs: list[dict]) -> dict:
    figures = {
        "requests_per_s": statistics.median(r["per_second"] for r in runs),
        "p50_ms": statistics.median(r["p50_ms"] for r in runs),
        "web_cpu_ms_per_request": statistics.median(r["web_cpu_ms"] for r in runs),
    }
    if "pg_cpu_ms" in runs[0]:
        figures["pg_cpu_ms_per_request"] = statistics.median(r["pg_cpu_ms"] for r in runs)
    figures["machine_busy"] = f"{statistics.median(r['machine_busy'] for r in runs):.0%}"
    return figures


def main() -> None:
    from django.db import connection

    from accounts.tokens import session_token_issue
    from agents.models import Agent
    from bench.agents_list import fleet_create

    caller, _, _ = fleet_create()
    stopped = Agent.objects.filter(owner=caller, status="stopped").order_by("created_at").first()
    bearer = {"Authorization": f"Bearer {session_token_issue(user=caller)}"}
    database = connection.settings_dict["NAME"]
    report("machine", hardware=procfs.hardware(), python_loop_ms=procfs.python_speed_ms(),
           load_average_before=procfs.load(),
           servers=",".join(SERVERS), rounds=ROUNDS, seconds_per_run=SECONDS)

    servers: dict[str, Server | RunningServer] = {}
    callers: dict[str, tuple[dict[str, str], str, str | None]] = {}  # bearer, detail path, database
    try:
        for name in SERVERS:
            servers[name] = server = server_named(name)
            if isinstance(server, RunningServer):
                callers[name] = (server.bearer, f"/api/agents/{server.agent_id}", server.database)
            else:
                callers[name] = (bearer, f"/api/agents/{stopped.pk}", database)
            own_bearer, detail, _ = callers[name]
            for _ in range(10):  # every worker imports its code and opens its connection
                for path in ("/api/auth/me", detail, "/api/agents"):
                    server.get(path, own_bearer)
            rss, pss = procfs.memory_mb(server.pids())
            report(f"{name}: memory idle (after warm-up)", processes=len(server.pids()), rss_mb=rss, pss_mb=pss)

        scenarios = {name: _scenarios(server, *callers[name][:2]) for name, server in servers.items()}
        titles = list(dict.fromkeys(title for each in scenarios.values() for title in each))
        results: dict[tuple[str, str], list[dict]] = {}
        for _round in range(ROUNDS):
            for title in titles:
                for name, server in servers.items():
                    if title in scenarios[name]:
                        path, clients, headers = scenarios[name][title]
                        results.setdefault((title, name), []).append(
                            _run(server, callers[name][2], path, clients, headers))
            for name, server in servers.items():
                rss, pss = procfs.memory_mb(server.pids())
                results.setdefault(("memory", name), []).append({"rss_mb": rss, "pss_mb": pss})

        fleet = next((name for name, server in servers.items() if not isinstance(server, RunningServer)), None)
        for title in titles:
            in_process = {}  # queries and database time, read from Fleet's own code in this process
            if fleet and title in scenarios[fleet]:
                path, _clients, headers = scenarios[fleet][title]
                in_process = _in_process(path, headers)
            for name, server in servers.items():
                if (title, name) in results:
                    figures = _figures(results[title, name])
                    if in_process and not isinstance(server, RunningServer):
                        figures.update(queries=in_process["queries"], db_ms_per_request=in_process["db_ms"])
                    report(f"{title} [{name}]", **figures)
        _cold_list(bearer)
        for name in servers:
            runs = results["memory", name]
            report(f"{name}: memory after the load (largest of the rounds)",
                   rss_mb=max(r["rss_mb"] for r in runs), pss_mb=max(r["pss_mb"] for r in runs))
    finally:
        for server in servers.values():
            server.stop()
    report("machine", load_average_after=procfs.load())
