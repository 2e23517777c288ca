"""`make run`'s process manager (fleet.processes): a process that exits on its own is started
again while the others keep running; one that keeps failing stops the stack with its return
code; Ctrl-C still stops everything. Real processes under the real manager, from a Procfile of
shell commands."""

from __future__ import annotations

import datetime
import os
import signal
import subprocess
import sys
from pathlib import Path

from fleet.processes import (
    FIRST_BACKOFF_SECONDS,
    MAX_BACKOFF_SECONDS,
    RESTART_LIMIT,
    RESTART_WINDOW_SECONDS,
    STEADY_SECONDS,
    Restarts,
)
from tests.support import wait_until

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime.datetime(2026, 11, 28, 12, 0, 0)


def _seconds(n: float) -> datetime.datetime:
    return T0 + datetime.timedelta(seconds=n)


def _manager(tmp_path: Path, procfile: str) -> tuple[subprocess.Popen, Path]:
    (tmp_path / "Procfile").write_text(procfile)
    log = tmp_path / "processes.log"
    with open(log, "w") as out:
        process = subprocess.Popen([sys.executable, "-m", "fleet.processes", "start", "--no-colour",
                                    "-f", str(tmp_path / "Procfile")],
                                   cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    return process, log


def _pids(log: Path, name: str) -> list[str]:
    return [line.rsplit("pid=", 1)[1].rstrip(")") for line in log.read_text().splitlines()
            if f"{name}.1 started (pid=" in line]


def test_a_process_that_exits_is_started_again_and_the_others_keep_running(tmp_path):
    marker = tmp_path / "died-once"
    process, log = _manager(tmp_path, (
        "steady: sleep 120\n"
        # Fails on its first life only, as a worker that lost its broker does.
        f"flaky: if [ -e {marker} ]; then echo second life; exec sleep 120; fi; touch {marker}; exit 3\n"
    ))
    try:
        wait_until(lambda: "second life" in log.read_text(), timeout=20, interval=0.1)
        text = log.read_text()
        assert "flaky.1 stopped (rc=3) on its own: starting it again in 1 s" in text, text
        assert len(_pids(log, "flaky")) == 2 and len(_pids(log, "steady")) == 1, text
        assert process.poll() is None  # the stack goes on

        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C
        assert process.wait(timeout=30) == 130
        text = log.read_text()
        assert "steady.1 stopped" in text and text.count("flaky.1 stopped") == 2, text
        assert "SIGKILL" not in text, text
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)


def test_a_process_that_keeps_failing_stops_the_stack_with_its_return_code(tmp_path):
    process, log = _manager(tmp_path, "steady: sleep 120\nbroken: exit 7\n")
    try:
        # RESTART_LIMIT exits with backoffs of 1, 2, 4 and 8 s between them: within the window.
        assert process.wait(timeout=40) == 7
        text = log.read_text()
        assert f"broken.1 stopped (rc=7) {RESTART_LIMIT} times within {RESTART_WINDOW_SECONDS} s" in text, text
        assert len(_pids(log, "broken")) == RESTART_LIMIT and "steady.1 stopped" in text, text
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)


def test_the_wait_doubles_up_to_its_ceiling_and_resets_after_a_steady_life():
    restarts = Restarts()
    waits, at = [], 0.0
    for _ in range(RESTART_LIMIT - 1):  # each life short, but spread beyond the window
        wait = restarts.exited(_seconds(at), _seconds(at - 1))
        waits.append(wait)
        at += RESTART_WINDOW_SECONDS
    assert waits == [FIRST_BACKOFF_SECONDS * 2**n for n in range(RESTART_LIMIT - 1)]
    assert restarts.exited(_seconds(at), _seconds(at - 1)) == FIRST_BACKOFF_SECONDS * 2 ** (RESTART_LIMIT - 1)
    for _ in range(10):
        at += RESTART_WINDOW_SECONDS
        assert restarts.exited(_seconds(at), _seconds(at - 1)) <= MAX_BACKOFF_SECONDS
    at += RESTART_WINDOW_SECONDS
    assert restarts.exited(_seconds(at), _seconds(at - STEADY_SECONDS)) == FIRST_BACKOFF_SECONDS


def test_restart_limit_exits_within_the_window_give_up():
    restarts = Restarts()
    for n in range(RESTART_LIMIT - 1):
        assert restarts.exited(_seconds(n), _seconds(n)) is not None
    assert restarts.exited(_seconds(RESTART_LIMIT), _seconds(RESTART_LIMIT)) is None
