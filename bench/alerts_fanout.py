"""Alert fan-out: 1,000 events against 100 rules, matched and enqueued (target: at most 1 s in all).

    DATABASE_URL=postgres://... REDIS_URL=redis://127.0.0.1:6379/N .venv/bin/python -m bench alerts_fanout

In the bench runner's throw-away database it makes 10 workspaces of 10 rules each
(a mix of literal, glob and "*" patterns, one webhook channel apiece), then emits 1,000 events of
assorted kinds through `fleet.events.emit()`, a tenth of them in two workspaces, each in its own
transaction as an emitter in autocommit would. Alerts fans out inside that transaction (the one
INSERT ... SELECT in a savepoint) and requests a dispatch after its commit (a cache round trip; a
broker message only when no dispatch is pending).

Every event is emitted twice, with and without the alerts subscriber, in alternating order so
that the load of a shared machine weighs on both alike. "Events alone" is the emitter's own cost
(the Event insert and the commit); the difference is what matching and enqueueing add, which is
what the target is about. CPU time is this process's, which tells the cost of the code from the
round-trip latency of a (shared, loaded) database. The tasks go to a queue of their own, counted
and emptied at the end, so no worker ever sends them.
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
    """Wall-clock time, CPU time and statements (savepoints included) of the emits of one kind."""

    def __init__(self):
        self.wall, self.cpu, self.statements = [], 0.0, 0

    def emit(self, emit, arguments):
        from django.db import connection

        def count(execute, *args):
            self.statements += 1
            return execute(*args)

        with connection.execute_wrapper(count):
            t0, c0 = time.perf_counter(), time.process_time()
            emit(**arguments)
            self.wall.append(time.perf_counter() - t0)
            self.cpu += time.process_time() - c0


def main() -> None:
    from django.apps import apps
    from django.db import connection
    from django.test.utils import override_settings

    from alerts.models import Delivery
    from alerts.services import event_fan_out
    from fleet import events
    from fleet.celery import app

    def emit_without_alerts(**arguments):
        events.unsubscribe(event_fan_out)
        try:
            events.emit(**arguments)
        finally:
            apps.get_app_config("alerts").ready()  # subscribes it again, the way the app does

    app.conf.task_default_queue = BENCH_QUEUE  # keep the bench's tasks away from real workers
    app.conf.task_always_eager = False
    try:
        with override_settings(OUTBOUND_ALLOWED_HOSTS=["127.0.0.1"]):  # the rules' never-called receiver
            fired = _fixtures()
        _clear_dispatch_flag()
        alone, with_alerts = _Timed(), _Timed()
        for n, arguments in enumerate(fired):
            pair = [(alone, emit_without_alerts), (with_alerts, events.emit)]
            for timed, emit in pair if n % 2 else reversed(pair):
                timed.emit(emit, arguments)
        deliveries = Delivery.objects.count()
    finally:
        _clear_dispatch_flag()
        messages = _purge_bench_queue(app)

    def ms(seconds):
        return f"{seconds * 1000:.3f} ms"

    added = [w - a for w, a in zip(with_alerts.wall, alone.wall, strict=True)]
    total_alone, total_with = sum(alone.wall), sum(with_alerts.wall)
    print(f"alerts fan-out: {EVENTS} events x {WORKSPACES * len(PATTERNS)} rules "
          f"({connection.vendor}, broker {app.conf.broker_url.split('://')[0]}, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())})")
    print(f"  deliveries created: {deliveries} ({deliveries / EVENTS:.1f} per event); "
          f"broker messages published: {messages}")
    for label, timed in (("events alone", alone), ("events with alerts", with_alerts)):
        wall = sorted(timed.wall)
        print(f"  {label}: {sum(wall):.3f} s; per event median {ms(statistics.median(wall))}, "
              f"p95 {ms(wall[int(len(wall) * 0.95)])}; {timed.statements / EVENTS:.1f} statements and "
              f"{ms(timed.cpu / EVENTS)} CPU per event")
    print(f"  added by matching and enqueueing: {total_with - total_alone:.3f} s; per event median "
          f"{ms(statistics.median(added))}, {ms((with_alerts.cpu - alone.cpu) / EVENTS)} CPU")
    verdict = "within" if total_with - total_alone <= TARGET_SECONDS else "OVER"
    print(f"  total: {total_with - total_alone:.3f} s to match and enqueue {EVENTS} events ({verdict} the "
          f"{TARGET_SECONDS:.0f} s target); {total_with:.3f} s with storing and committing the events")
