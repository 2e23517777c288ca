"""Fan-out on SQLite, the embedded default: no SKIP LOCKED, one writer at a time, JSON tables
instead of arrays, the filesystem broker. Run in a process of its own (tests/alerts/sqlite_fanout.py)."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_on_sqlite_bursts_are_matched_once_in_one_statement_and_nothing_is_lost(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tests.alerts.sqlite_fanout", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert (report["vendor"], report["broker"]) == ("sqlite", "filesystem")

    burst = report["burst"]
    assert burst["dispatch_requests"] == ["alerts.dispatch_deliveries"]  # one message for the burst
    assert burst["statements"] == ["UPDATE", "WITH"]  # the claim, then the match of the whole burst
    assert burst["matched"] == [
        ["agent glob", "all", "literal", "team all"],  # two workspaces; the disabled rule left out
        ["agent glob", "all"],
        ["all", "mail"],
        ["team all"],
        [],  # no workspace
        ["tested"],  # a rule's test: its rule only, disabled as it is
    ]
    assert burst["queued"] == 10 and burst["published_once"] is True
    assert (burst["waiting"], burst["again"]) == (0, 0)

    concurrent = report["concurrent"]
    assert concurrent["dispatches"] == 2
    assert concurrent["events_claimed"] == concurrent["distinct_events_claimed"] == 100
    assert concurrent["deliveries_made"] == concurrent["published"] == concurrent["distinct_published"] == 350
    assert concurrent["waiting"] == 0

    crash = report["crash"]
    assert crash["died"] is True and crash["waiting_after"] == 3  # the claim rolled back with the failure
    assert crash["next_dispatch"] == 9 and crash["waiting"] == 0
    assert crash["matched"] == [["agent glob", "all", "literal"]] * 3

    sweep = report["sweep"]
    assert (sweep["queued"], sweep["published"], sweep["stale"]) == (1, 1, ["team all"])
    assert (sweep["fresh"], sweep["waiting"]) == ([], 1)  # a fresh event is left to its dispatch

    assert report["rule_test"] == {"matched": ["tested"], "tasks": ["alerts.deliver"], "fanned_out": True}
