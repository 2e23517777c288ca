"""Stats history at full size: 24 hours of 10-second samples for 1,000 agents (8.64 million
rows). Figures: `24h` and `1h` history requests (docs/performance.md: at most 50 ms), one
sampler insert into the full table, and one purge pass of an hour's rows.

The rows are generated in SQL (generate_series), hour by hour in time order, the way the
sampler writes them: each heap page holds one tick of many agents, so one agent's day is
spread over thousands of pages, as in production. PostgreSQL only.
"""

from __future__ import annotations

import itertools
import time
from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone

from bench import measure, report

AGENTS = 1000
HOURS = 24
TICK_SECONDS = 10
TICKS_PER_HOUR = 3600 // TICK_SECONDS

GENERATE_HOUR = """
INSERT INTO agents_statssample (agent_id, recorded_at, cpu_percent, memory_usage_mb, memory_limit_mb,
    memory_percent, network_rx_mb, network_tx_mb, disk_read_mb, disk_write_mb, pids)
SELECT a.id, %(first)s + k * interval '10 seconds',
    ((k * 7 + a.n) %% 100)::real,
    (200 + (k + a.n) %% 50)::real,
    1024::real,
    ((200 + (k + a.n) %% 50) / 10.24)::real,
    k * 0.01 + a.n, k * 0.005 + a.n, k * 0.002, k * 0.001,
    10 + (k + a.n) %% 5
FROM generate_series(%(k0)s, %(k1)s) AS k
CROSS JOIN (SELECT id, row_number() OVER (ORDER BY id) AS n FROM agents_agent) AS a
ORDER BY k, a.n
"""


def _fleet():
    from accounts.models import User
    from agents.models import Agent

    owner = User.objects.create(email="bench-history@example.com")
    Agent.objects.bulk_create(
        Agent(name=f"bench-{n}", owner=owner, status="running", container_id=f"{n:064x}") for n in range(AGENTS)
    )
    return owner, list(Agent.objects.order_by("id"))


def _generate(first) -> None:
    started = time.perf_counter()
    for hour in range(HOURS):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL work_mem = '256MB'")
            k0 = hour * TICKS_PER_HOUR
            cursor.execute(GENERATE_HOUR, {"first": first, "k0": k0, "k1": k0 + TICKS_PER_HOUR - 1})
    seconds = time.perf_counter() - started
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE agents_statssample")  # what autovacuum does for an insert-only table
        # Write the generated gigabytes out now, so the reads below do not queue behind it.
        cursor.execute("CHECKPOINT")
        cursor.execute(
            "SELECT count(*), pg_relation_size('agents_statssample'), pg_indexes_size('agents_statssample')"
            " FROM agents_statssample"
        )
        rows, heap, indexes = cursor.fetchone()
    report(
        "generated",
        rows=rows,
        seconds=seconds,
        rows_per_s=round(rows / seconds),
        table_mb=round(heap / 2**20),
        indexes_mb=round(indexes / 2**20),
    )


def _explain(agent_id, window) -> str:
    """Execution time of the bucketed 24 h read, as PostgreSQL measures it."""
    from agents.models import StatsSample
    from agents.stats import history

    samples = StatsSample.objects.filter(
        agent_id=agent_id, recorded_at__gte=window.start, recorded_at__lte=window.end
    )
    captured = []

    def bucketed():
        captured.append(history._bucketed(samples, window=window, buckets=history.MAX_RECORDS))

    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        bucketed()
    sql = queries[-1]["sql"]
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql)
        plan = [line for (line,) in cursor.fetchall()]
    return next((line.strip() for line in plan if line.strip().startswith("Execution Time")), "?")


def main() -> None:
    if connection.vendor != "postgresql":
        print("  stats_history needs PostgreSQL (generate_series); skipped")
        return
    from rest_framework.test import APIClient

    from accounts.tokens import session_token_issue
    from agents.stats.history import history_records
    from agents.stats.services import stats_purge
    from agents.stats.store import samples_insert
    from agents.stats.window import RANGES, Window

    owner, agents = _fleet()
    end = timezone.now().replace(microsecond=0)
    first = end - timedelta(hours=HOURS) + timedelta(seconds=TICK_SECONDS)
    _generate(first)

    rotating = itertools.cycle(agents[:: len(agents) // 100])  # 100 different agents, cold pages
    for name in ("24h", "1h"):
        window = Window(end - RANGES[name], end)
        timing = measure(lambda window=window: history_records(agent_id=next(rotating).pk, window=window), repeat=100)
        records = len(history_records(agent_id=agents[0].pk, window=window))
        report(f"history {name} read, 100 agents in turn", records=records, median_ms=timing.median_ms,
               p95_ms=timing.p95_ms)
        same = agents[1].pk
        timing = measure(lambda same=same, window=window: history_records(agent_id=same, window=window), repeat=50)
        report(f"history {name} read, one agent again", median_ms=timing.median_ms, p95_ms=timing.p95_ms)
    report("postgres, bucketed 24h query", plan=_explain(agents[2].pk, Window(end - RANGES["24h"], end)))

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {session_token_issue(user=owner)}")
    for name in ("24h", "1h"):
        def request(name=name):
            agent = next(rotating)
            response = client.get(f"/api/agents/{agent.pk}/stats/history?range={name}")
            assert response.status_code == 200, response.content[:200]

        try:
            timing = measure(request, repeat=100)
        except Exception as error:  # another app's routes failing to import must not cost the purge figure
            report(f"GET /api/agents/:id/stats/history?range={name}", failed=repr(error)[:200])
            continue
        report(f"GET /api/agents/:id/stats/history?range={name}", median_ms=timing.median_ms, p95_ms=timing.p95_ms,
               requests_per_s=timing.per_second)

    from bench.stats_sampler import _instant

    snapshots = {agent.pk: _instant(agent) for agent in agents}
    tick_at = iter(end + timedelta(seconds=TICK_SECONDS * (i + 1)) for i in range(100))
    timing = measure(lambda: samples_insert(recorded_at=next(tick_at), snapshots=snapshots), repeat=10, warmup=1)
    report(f"one tick's insert ({AGENTS} rows) into the full table", median_ms=timing.median_ms)

    from django.test.utils import CaptureQueriesContext

    started = time.perf_counter()
    with CaptureQueriesContext(connection) as queries:
        deleted = stats_purge(now=first + timedelta(hours=HOURS + 1) - timedelta(seconds=1))
    seconds = time.perf_counter() - started
    deletes = [float(q["time"]) for q in queries if q["sql"].startswith("DELETE")]
    report("purge pass of the oldest hour", rows=deleted, seconds=seconds, batches=len(deletes),
           ms_per_batch=seconds / max(len(deletes), 1) * 1000, slowest_delete_ms=max(deletes, default=0) * 1000)
