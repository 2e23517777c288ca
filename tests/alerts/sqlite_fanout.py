"""Alert fan-out on SQLite with the embedded broker (the defaults of `make run`), run by
tests/alerts/test_fanout_sqlite.py in a process of its own: `python -m tests.alerts.sqlite_fanout
<directory>`. Migrates a new database in that directory (its cache and filesystem broker too),
emits events, runs dispatches (two at once as well), a dispatch dying between its claim and its
match, the sweep and a rule's test, reads back what was published from the broker's own files,
and prints what it saw as one JSON object."""

from __future__ import annotations

import base64
import json
import os
import sys
import threading
from datetime import timedelta
from pathlib import Path


def main(directory: str) -> dict:
    os.environ["DATABASE_URL"] = f"sqlite:///{directory}/fleet.sqlite3"
    os.environ["FLEET_VAR_DIR"] = f"{directory}/var"
    os.environ["REDIS_URL"] = ""  # the file cache and the filesystem broker, as `make run` has them
    os.environ.pop("CELERY_BROKER_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection, connections
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from accounts.models import User
    from alerts.channel_config import parse_channels
    from alerts.models import Delivery
    from alerts.services import alert_rule_create, alert_rule_test, deliveries_dispatch, deliveries_sweep, fanout
    from fleet import events
    from fleet.models import Event
    from workspaces.models import Workspace

    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    queue = Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_out"])

    def published() -> list[tuple[str, list]]:
        """(task, args) of every message in the broker's queue folder, then emptied."""
        found = []
        for path in sorted(queue.iterdir()):
            message = json.loads(path.read_text())
            body = message["body"]
            if message.get("properties", {}).get("body_encoding") == "base64":
                body = base64.b64decode(body)
            args = json.loads(body)[0]
            found.append((message["headers"]["task"], args))
            path.unlink()
        return found

    def delivered(task_args) -> list[str]:
        return [a for task, args in task_args if task.startswith("alerts.deliver") for a in _ids(args)]

    def waiting() -> int:
        return Event.objects.filter(fanned_out_at__isnull=True).count()

    def rules_of(event) -> list[str]:
        return sorted(Delivery.objects.filter(event=event).values_list("rule__name", flat=True))

    report: dict = {"vendor": connection.vendor, "broker": settings.CELERY_BROKER_URL.split(":")[0]}
    call_command("migrate", verbosity=0)
    owner = User.objects.create_user(email="owner@example.com")
    ops, team = Workspace.objects.create(name="Ops", owner=owner), Workspace.objects.create(name="Team", owner=owner)
    hook = [{"type": "webhook", "url": "http://127.0.0.1:9/hook"}]

    def rule(workspace, name, pattern, enabled=True, channels=hook):
        return alert_rule_create(workspace=workspace, created_by=owner, name=name, event_pattern=pattern,
                                 channels=parse_channels(channels), enabled=enabled)

    rule(ops, "all", "*")
    rule(ops, "agent glob", "agent.*")
    rule(ops, "literal", "agent.error")
    rule(ops, "disabled", "agent.*", enabled=False)
    rule(ops, "mail", "integration.*", channels=[{"type": "email", "to": ["ops@example.com"]}])
    tested = rule(ops, "tested", "billing.*", enabled=False)
    rule(team, "team all", "*")

    # A burst: emitters commit, one dispatch is requested, the dispatch matches it in one statement.
    burst = [
        events.emit("agent.error", workspace_ids=[ops.id, team.id]),
        events.emit("agent.started", workspace_ids=[ops.id]),
        events.emit("integration.failed", workspace_ids=[ops.id]),
        events.emit("sandbox.x", workspace_ids=[team.id]),
        events.emit("agent.error"),
        events.emit("billing.test", workspace_ids=[ops.id], test=True, data={"ruleId": str(tested.id)}),
    ]
    requests = published()
    with CaptureQueriesContext(connection) as queries:
        queued = deliveries_dispatch()
    sent = published()
    report["burst"] = {
        "dispatch_requests": [task for task, _ in requests],
        "statements": [q["sql"].split()[0] for q in queries
                       if not q["sql"].startswith(("BEGIN", "COMMIT", "SAVEPOINT", "RELEASE"))],
        "queued": queued,
        "matched": [rules_of(event) for event in burst],
        "published_once": sorted(delivered(sent)) == sorted(map(str, Delivery.objects.values_list("id", flat=True))),
        "waiting": waiting(),
        "again": deliveries_dispatch(),
    }

    # Two dispatches at once: SQLite takes one writer at a time; no event matched twice.
    fanout.FAN_OUT_BATCH = 7
    for i in range(100):
        events.emit("agent.error", workspace_ids=[ops.id] + ([team.id] if i % 2 else []))
    published()
    before = Delivery.objects.count()
    claims, barrier = [], threading.Barrier(2)
    claim = fanout.events_claim

    def recorded_claim(**kwargs):
        claimed = claim(**kwargs)
        claims.append([str(event.id) for event in claimed])
        return claimed

    fanout.events_claim = recorded_claim
    counts = []

    def dispatcher():
        barrier.wait()
        try:
            counts.append(deliveries_dispatch())
        finally:
            connections.close_all()

    threads = [threading.Thread(target=dispatcher) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    fanout.events_claim = claim
    claimed = [pk for batch in claims for pk in batch]
    ids = delivered(published())
    report["concurrent"] = {
        "dispatches": len(counts),
        "events_claimed": len(claimed), "distinct_events_claimed": len(set(claimed)),
        "deliveries_made": Delivery.objects.count() - before,
        "published": len(ids), "distinct_published": len(set(ids)),
        "waiting": waiting(),
    }

    # A dispatch dying between its claim and its match: rolled back, the next one takes the events.
    crashed = [events.emit("agent.error", workspace_ids=[ops.id]) for _ in range(3)]
    insert = fanout.deliveries_insert

    def claim_then_die(**kwargs):
        raise RuntimeError("worker killed")

    fanout.deliveries_insert = claim_then_die
    try:
        deliveries_dispatch()
        died = False
    except RuntimeError:
        died = True
    fanout.deliveries_insert = insert
    report["crash"] = {"died": died, "waiting_after": waiting(), "next_dispatch": deliveries_dispatch(),
                       "matched": [rules_of(event) for event in crashed], "waiting": waiting()}

    # The sweep: an event whose dispatch was lost is fanned out once it has waited a while.
    published()
    stale = events.emit("agent.error", workspace_ids=[team.id], occurred_at=timezone.now() - timedelta(minutes=2))
    fresh = events.emit("agent.error", workspace_ids=[team.id])
    published()  # the dispatch request, lost
    swept = deliveries_sweep()
    report["sweep"] = {"queued": swept, "stale": rules_of(stale), "fresh": rules_of(fresh),
                       "published": len(delivered(published())), "waiting": waiting()}

    # A rule's test: matched at once to its rule alone; no dispatch requested.
    event = alert_rule_test(rule=tested)
    sent = published()
    report["rule_test"] = {"matched": rules_of(event), "tasks": sorted(task for task, _ in sent),
                           "fanned_out": Event.objects.get(pk=event.pk).fanned_out_at is not None}
    return report


def _ids(args) -> list[str]:
    first = args[0] if args else None
    return [str(pk) for pk in first] if isinstance(first, list) else [str(first)]


if __name__ == "__main__":
    sys.stdout.write(json.dumps(main(sys.argv[1])) + "\n")
