"""Alert fan-out: 1,000 events against 100 rules, matched and enqueued (target: at most 1 s in all).

    DATABASE_URL=postgres://... REDIS_URL=redis://127.0.0.1:6379/N .venv/bin/python bench/alerts_fanout.py

It creates a throw-away test database (test_<name>), 10 workspaces with 10 rules each (a mix of
literal, glob and "*" patterns, one webhook channel apiece), and 1,000 stored events of assorted
kinds, a tenth of them in two workspaces. It then times `event_fan_out()` for every event: the
one INSERT ... SELECT that matches the rules and creates the deliveries, and the dispatch request
(a cache round trip; a broker message only when no dispatch is pending). It prints wall-clock
time per event and this process's CPU time, which tells the cost of the code from the round-trip
latency of a (shared, loaded) database. The tasks go to a queue of their own, counted and
emptied at the end, so no worker ever sends them.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleet.settings")

EVENTS = 1_000
WORKSPACES = 10
PATTERNS = ("*", "agent.*", "agent.error", "agent.warning", "agent.budget_exceeded", "agent.stopped",
            "integration.*", "integration.failed", "sandbox.*", "agent.budget_soft_exceeded")
KINDS = ("agent.error", "agent.started", "agent.stopped", "agent.warning", "agent.budget_soft_exceeded",
         "integration.connected", "sandbox.approval_requested", "agent.queued")
BENCH_QUEUE = "bench-alerts-fanout"
TARGET_SECONDS = 1.0


def _fixtures():
    from django.utils import timezone

    from accounts.models import User
    from alerts.channel_config import parse_channels
    from alerts.services import alert_rule_create
    from fleet.models import Event
    from workspaces.models import Workspace

    owner = User.objects.create_user("bench@example.com", "bench-password")
    workspaces = [Workspace.objects.create(name=f"bench {i}", owner=owner) for i in range(WORKSPACES)]
    channels = [{"type": "webhook", "url": "http://127.0.0.1:9/bench"}]
    for workspace in workspaces:
        for n, pattern in enumerate(PATTERNS):
            alert_rule_create(workspace=workspace, created_by=owner, name=f"rule {n}", event_pattern=pattern,
                              channels=parse_channels(channels))
    now = timezone.now()
    events = [
        Event(
            kind=KINDS[i % len(KINDS)],
            workspace_ids=[str(workspaces[i % WORKSPACES].id)]
            + ([str(workspaces[(i + 1) % WORKSPACES].id)] if i % 10 == 0 else []),
            message=f"bench event {i}",
            occurred_at=now,
        )
        for i in range(EVENTS)
    ]
    return Event.objects.bulk_create(events)


def _purge_bench_queue(app) -> int:
    """Empty the bench's queue; the number of messages it held is returned."""
    with app.connection_for_write() as connection:
        try:
            return connection.default_channel.queue_purge(BENCH_QUEUE) or 0
        except Exception:  # the queue was never declared: nothing to purge
            return 0


def _clear_dispatch_flag() -> None:
    # A flag left by another run would spare this one its publish; one left by this run would
    # hold back real dispatches on a shared Redis for a few seconds. Clearing it is always safe.
    from django.core.cache import cache

    from alerts.services.dispatch import DISPATCH_PENDING_KEY

    cache.delete(DISPATCH_PENDING_KEY)


def main() -> None:
    import django

    django.setup()
    from django.db import connection
    from django.test.utils import CaptureQueriesContext, override_settings

    from alerts.models import Delivery
    from alerts.services import event_fan_out
    from fleet.celery import app

    app.conf.task_default_queue = BENCH_QUEUE  # keep the bench's tasks away from real workers
    app.conf.task_always_eager = False
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"bench_alerts_{connection.settings_dict['NAME']}"
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        with override_settings(OUTBOUND_ALLOWED_HOSTS=["127.0.0.1"]):  # the rules' never-called receiver
            events = _fixtures()
        _clear_dispatch_flag()
        timings = []
        with CaptureQueriesContext(connection) as queries:
            started, cpu_started = time.perf_counter(), time.process_time()
            for event in events:
                t0 = time.perf_counter()
                event_fan_out(event)
                timings.append(time.perf_counter() - t0)
            total, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        deliveries = Delivery.objects.count()
    finally:
        _clear_dispatch_flag()
        messages = _purge_bench_queue(app)
        connection.creation.destroy_test_db(old_name, verbosity=0)

    ms = sorted(t * 1000 for t in timings)
    print(f"alerts fan-out: {EVENTS} events x {WORKSPACES * len(PATTERNS)} rules "
          f"({connection.vendor}, broker {app.conf.broker_url.split('://')[0]})")
    print(f"  deliveries created: {deliveries} ({deliveries / EVENTS:.1f} per event); "
          f"broker messages published: {messages}")
    print(f"  queries: {len(queries)} ({len(queries) / EVENTS:.1f} per event)")
    print(f"  per event: median {statistics.median(ms):.3f} ms, mean {statistics.fmean(ms):.3f} ms, "
          f"p95 {ms[int(len(ms) * 0.95)]:.3f} ms, max {ms[-1]:.3f} ms")
    print(f"  this process's CPU: {cpu:.3f} s ({cpu / EVENTS * 1000:.3f} ms per event); the rest is waiting on "
          f"the database and the cache (1 statement and 1 cache round trip per event)")
    verdict = "within" if total <= TARGET_SECONDS else "OVER"
    print(f"  total: {total:.3f} s for {EVENTS} events ({verdict} the {TARGET_SECONDS:.0f} s target)")


if __name__ == "__main__":
    main()
