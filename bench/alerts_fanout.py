"""Alert fan-out: 1,000 events against 100 rules, matched and enqueued (target: at most 1 s in all).

    DATABASE_URL=postgres://... REDIS_URL=redis://127.0.0.1:6379/N .venv/bin/python -m bench alerts_fanout

In the bench runner's throw-away database it makes 10 workspaces of 10 rules each
(a mix of literal, glob and "*" patterns, one webhook channel apiece), then, in each of ROUNDS
rounds, emits 1,000 events of assorted kinds through `fleet.events.emit()`, a tenth of them in
two workspaces, each in its own transaction as an emitter in autocommit would, and runs the
dispatch of that burst here, in-process, as the worker runs it.

Fleet's own time for the burst is what alerts adds to the emitters plus the dispatch:
- The emitters. Every event is emitted twice, with and without the alerts subscriber, in
  alternating order so that the load of a shared machine weighs on both alike. "Events alone" is
  the emitter's own cost (the Event insert and the commit); the difference is what alerts adds
  (after the commit, a dispatch request: a cache round trip, a broker message for the first
  event of the burst). The events emitted without alerts are then marked fanned out (untimed),
  so that the dispatch finds the burst alone.
- The dispatch (`deliveries_dispatch`, the body of `alerts.dispatch_deliveries`): the claim and
  the match of the burst (two statements per batch of events), its commit, and the publishing of
  the deliver messages.
CPU time is this process's (the emitters and the dispatch) and, for the dispatch, that of its
PostgreSQL backend, which tells the cost of the code from the round-trip latency of a (shared,
loaded) database. The tasks go to a queue of their own, counted and emptied after each round, so
no worker ever runs them.
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
ROUNDS = 3
PATTERNS = ("*", "agent.*", "agent.error", "agent.warning", "agent.budget_exceeded", "agent.stopped",
            "integration.*", "integration.failed", "sandbox.*", "agent.budget_soft_exceeded")
KINDS = ("agent.error", "agent.started", "agent.stopped", "agent.warning", "agent.budget_soft_exceeded",
         "integration.connected", "sandbox.approval_requested", "agent.queued")
BENCH_QUEUE = "bench-alerts-fanout"
TARGET_SECONDS = 1.0


def _fixtures() -> list[dict]:
    """The rules, and the arguments of the events to emit."""
    from accounts.models import User
    from alerts.channel_config import parse_channels
    from alerts.services import alert_rule_create
    from workspaces.models import Workspace

    owner = User.objects.create_user("bench@example.com", "bench-password")
    workspaces = [Workspace.objects.create(name=f"bench {i}", owner=owner) for i in range(WORKSPACES)]
    channels = [{"type": "webhook", "url": "http://127.0.0.1:9/bench"}]
    for workspace in workspaces:
        for n, pattern in enumerate(PATTERNS):
            alert_rule_create(workspace=workspace, created_by=owner, name=f"rule {n}", event_pattern=pattern,
                              channels=parse_channels(channels))
    return [
        {
            "kind": KINDS[i % len(KINDS)],
            "workspace_ids": [workspaces[i % WORKSPACES].id]
            + ([workspaces[(i + 1) % WORKSPACES].id] if i % 10 == 0 else []),
            "message": f"bench event {i}",
        }
        for i in range(EVENTS)
    ]


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


class _Timed:
    """Wall-clock time, CPU time and statements (savepoints included) of the calls of one kind."""

    def __init__(self):
        self.wall, self.cpu, self.statements = [], 0.0, 0

    def call(self, fn, **arguments):
        from django.db import connection

        def count(execute, *args):
            self.statements += 1
            return execute(*args)

        with connection.execute_wrapper(count):
            t0, c0 = time.perf_counter(), time.process_time()
            result = fn(**arguments)
            self.wall.append(time.perf_counter() - t0)
            self.cpu += time.process_time() - c0
        return result


def _backend_cpu() -> float:
    """CPU seconds this process's PostgreSQL backend has used (0 on SQLite: in this process)."""
    from django.db import connection

    from bench import _procfs

    if connection.vendor != "postgresql":
        return 0.0
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    return _procfs.cpu_seconds([pid]).get(pid, 0.0)


def main() -> None:
    from django.apps import apps
    from django.db import connection
    from django.test.utils import override_settings
    from django.utils import timezone

    from alerts.models import Delivery
    from alerts.services import deliveries_dispatch, event_dispatch_request
    from bench import _procfs
    from fleet import events
    from fleet.celery import app
    from fleet.models import Event

    def emit(timed, arguments, *, alerts: bool):
        """One emit, timed; without the alerts subscriber unless `alerts` (unsubscribed untimed)."""
        if alerts:
            return timed.call(events.emit, **arguments)
        events.unsubscribe(event_dispatch_request)
        try:
            return timed.call(events.emit, **arguments)
        finally:
            apps.get_app_config("alerts").ready()  # subscribes it again, the way the app does

    app.conf.task_default_queue = BENCH_QUEUE  # keep the bench's tasks away from real workers
    app.conf.task_always_eager = False
    rounds = []
    try:
        with override_settings(OUTBOUND_ALLOWED_HOSTS=["127.0.0.1"]):  # the rules' never-called receiver
            fired = _fixtures()
        for _ in range(ROUNDS):
            _clear_dispatch_flag()
            _purge_bench_queue(app)
            alone, with_alerts, dispatch = _Timed(), _Timed(), _Timed()
            alone_ids = []
            for n, arguments in enumerate(fired):
                for alerts in (False, True) if n % 2 else (True, False):
                    event = emit(with_alerts if alerts else alone, arguments, alerts=alerts)
                    if not alerts:
                        alone_ids.append(event.pk)
            Event.objects.filter(pk__in=alone_ids).update(fanned_out_at=timezone.now())
            requests = _purge_bench_queue(app)  # the dispatch messages the emitters published
            database_before = _backend_cpu()
            queued = dispatch.call(deliveries_dispatch)
            database = _backend_cpu() - database_before
            rounds.append({
                "alone": alone, "with": with_alerts, "dispatch": dispatch, "database": database,
                "queued": queued, "requests": requests, "messages": _purge_bench_queue(app),
            })
        deliveries = Delivery.objects.count()
    finally:
        _clear_dispatch_flag()
        _purge_bench_queue(app)

    def ms(seconds):
        return f"{seconds * 1000:.3f} ms"

    def median(values):
        return statistics.median(values)

    print(f"alerts fan-out: {EVENTS} events x {WORKSPACES * len(PATTERNS)} rules, {ROUNDS} rounds "
          f"({connection.vendor}, broker {app.conf.broker_url.split('://')[0]}; {_procfs.hardware()}; "
          f"load average {_procfs.load()})")
    print(f"  deliveries per burst: {deliveries // ROUNDS} ({deliveries / ROUNDS / EVENTS:.1f} per event); "
          f"broker messages per burst: {median([r['requests'] for r in rounds]):.0f} dispatch request(s), "
          f"{median([r['messages'] for r in rounds]):.0f} from the dispatch")
    for label, key in (("events alone", "alone"), ("events with alerts", "with")):
        wall = sorted(w for r in rounds for w in r[key].wall)
        cpu = sum(r[key].cpu for r in rounds)
        statements = sum(r[key].statements for r in rounds)
        print(f"  {label}: {median([sum(r[key].wall) for r in rounds]):.3f} s per burst; per event median "
              f"{ms(median(wall))}, p95 {ms(wall[int(len(wall) * 0.95)])}; {statements / EVENTS / ROUNDS:.1f} "
              f"statements and {ms(cpu / EVENTS / ROUNDS)} CPU per event")
    totals = []
    for n, r in enumerate(rounds, 1):
        added = sum(r["with"].wall) - sum(r["alone"].wall)
        added_cpu = r["with"].cpu - r["alone"].cpu
        dispatch = r["dispatch"]
        totals.append(added + dispatch.wall[0])
        database = f", {r['database']:.2f} s in PostgreSQL" if connection.vendor == "postgresql" else ""
        print(f"  round {n}: emitters +{added:.3f} s (+{added_cpu:.3f} s CPU); dispatch {dispatch.wall[0]:.3f} s "
              f"({dispatch.cpu:.3f} s CPU here{database}, {dispatch.statements} statements, {r['queued']} "
              f"deliveries queued); matched and enqueued in {totals[-1]:.3f} s")
    total = median(totals)
    verdict = "within" if total <= TARGET_SECONDS else "OVER"
    print(f"  total: matched and enqueued in {total:.3f} s, median of {ROUNDS} rounds ({verdict} the "
          f"{TARGET_SECONDS:.0f} s target): the emitters' added time plus the dispatch of the burst")
