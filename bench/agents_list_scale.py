"""GET /api/agents after a write, for 1,050 and 10,000 agents: the list built whole against the
list put together from kept rows (agents.list_rows), with the whole-body cache off.

    DEBUG=true python -m bench agents_list_scale      (throwaway database; see bench/__init__.py)

The fleet of bench/agents_list.py at two sizes: one caller, an editor of 50 workspaces, sees
N - 50 agents of 20 other users (each assigned to one or two of the workspaces) and 50 of its
own. Each request runs in-process through Django's test client with the caller's Bearer session
and AGENT_LIST_CACHE_MB=0, so no whole body is ever served from memory and every answer is
what the first request after a write costs. Figures per request: median and p95 wall time, the
CPU time of this process, the number of queries (median) and their database time (DEBUG=true:
Django's query log; without it the queries are not timed).

- "built whole": AGENT_LIST_ROWS_MB=0, the list read and serialized row by row every time (what
  every list after a write cost before).
- "after one write": before each timed request one agent's status is changed (an UPDATE of one
  listed column, in its own transaction): one row read and serialized again (its assignments
  not read: their revision did not move).
- "after a workspace rename": one of the 50 workspaces renamed before each request: the rows of
  its agents (N/50 and more) read again.
- "nothing of the list changed": kept rows only (a write elsewhere moved the list version).
Targets (docs/performance.md): after one write at most 5 ms for 1,050 agents, 40 ms for 10,000.
"""

from __future__ import annotations

import statistics
import time

from bench.agents_list import fleet_create

SIZES = (1_050, 10_000)


def _timed(fetch, before, *, repeat: int) -> dict:
    """`before()` untimed, then one request timed: wall, this process's CPU, queries, their time."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    wall, cpu, db, queries = [], [], [], []
    for _ in range(repeat):
        before()
        with CaptureQueriesContext(connection) as captured:
            started, cpu_started = time.perf_counter(), time.process_time()
            fetch()
            cpu.append(time.process_time() - cpu_started)
            wall.append(time.perf_counter() - started)
        queries.append(len(captured.captured_queries))
        db.append(sum(float(q.get("time") or 0) for q in captured.captured_queries))
    ordered = sorted(wall)
    return {
        "median_ms": statistics.median(wall) * 1000,
        "p95_ms": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] * 1000,
        "cpu_ms": statistics.median(cpu) * 1000,
        "queries": statistics.median_low(queries),  # not the max: a user read again by the auth cache
        "db_ms": statistics.median(db) * 1000,
    }


def main() -> None:
    import orjson
    from django.test import Client, override_settings

    from accounts.tokens import session_token_issue
    from agents import list_rows
    from agents.models import Agent
    from bench import report
    from workspaces.models import Workspace

    for size in SIZES:
        caller, agents, workspaces = fleet_create(agents=size, tag=f"scale{size}")
        client = Client(HTTP_AUTHORIZATION=f"Bearer {session_token_issue(user=caller)}")

        def fetch(client=client):
            response = client.get("/api/agents")
            assert response.status_code == 200, response.content[:200]
            return response

        statuses = iter(["stopped", "running"] * 1_000)
        renames = iter(range(1_000_000))

        def one_write(agents=agents, statuses=statuses):
            Agent.objects.filter(pk=agents[len(agents) // 2].pk).update(status=next(statuses))

        def rename(workspaces=workspaces, renames=renames):
            Workspace.objects.filter(pk=workspaces[3].pk).update(name=f"renamed {next(renames)}")

        repeat = 30 if size <= 2_000 else 12
        with override_settings(AGENT_LIST_CACHE_MB=0):
            rows = len(orjson.loads(fetch().content))
            with override_settings(AGENT_LIST_ROWS_MB=0):
                whole = _timed(fetch, one_write, repeat=repeat)
            list_rows.forget_rows()
            fetch()  # the caller's rows kept
            after_write = _timed(fetch, one_write, repeat=repeat)
            after_rename = _timed(fetch, rename, repeat=repeat)
            unchanged = _timed(fetch, lambda: None, repeat=repeat)
            with override_settings(AGENT_LIST_ROWS_MB=0):
                whole_body = fetch().content
            same = fetch().content == whole_body
        title = f"GET /api/agents, {rows} agents, whole-body cache off"
        report(f"{title}, built whole", **whole)
        report(f"{title}, after one write", **after_write)
        report(f"{title}, after a workspace rename", **after_rename)
        report(f"{title}, nothing of the list changed", **unchanged, same_body_as_whole=same,
               kept_kb=list_rows.kept_bytes() / 1024)
        list_rows.forget_rows()
