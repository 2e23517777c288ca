"""Beat SIGKILLed and restarted (docs/reliability.md): beat (the Procfile's `beat`: fleet.beat's
DatabaseScheduler) is killed right after it sent a periodic job and started again at once: the
job's runs on the Procfile's `periodic` worker (timed from its log as they come) are never two
within one period, and they go on within a bound. (Its own module: it needs no engine, so it
never waits in the runtime tests' group.)
"""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import pytest
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from tests.faults.stack import private_stack, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

PERIOD = 6  # seconds: longer than beat takes to start again, so a doubled run would show
BEAT_READY = "beat: Starting"
# Beat's "Sending due task" and the worker's "Task ... received" show from DEBUG only (fleet/settings.py).
SENDS_AND_RUNS = {"LOG_LEVEL": "DEBUG"}
NO_ENGINE = "unix:///nonexistent/docker.sock"


class LogWatch:
    """Times the lines of a process's log matching `pattern` as they appear (polled every 20 ms),
    from a thread, while the process runs."""

    def __init__(self, paths, pattern: str):
        self._paths, self._pattern = paths, re.compile(pattern)
        self._seen: dict[str, int] = {}
        self.times: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._main, daemon=True)

    def _main(self) -> None:
        while not self._stop.wait(0.02):
            for path in self._paths():
                text = Path(path).read_text(errors="replace")
                found = len(self._pattern.findall(text))
                for _ in range(found - self._seen.get(str(path), 0)):
                    self.times.append(time.monotonic())
                self._seen[str(path)] = found

    def __enter__(self) -> LogWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def _heartbeat_job() -> PeriodicTask:
    """The worker heartbeat as setup_periodic_tasks installs it, every PERIOD seconds."""
    every, _ = IntervalSchedule.objects.get_or_create(every=PERIOD, period=IntervalSchedule.SECONDS)
    return PeriodicTask.objects.create(name="fleet: worker heartbeat", task="fleet.worker_heartbeat", interval=every,
                                       queue="periodic", expire_seconds=PERIOD)


def test_beat_killed_right_after_a_send_and_restarted_runs_no_job_twice(tmp_path):
    _heartbeat_job()
    with private_stack(tmp_path, NO_ENGINE, env={}) as stack:
        worker = stack.worker("periodic", **SENDS_AND_RUNS)
        with LogWatch(lambda: [worker.log], r"Task fleet\.worker_heartbeat\[[^\]]+\] received") as runs, \
                LogWatch(lambda: [w.log for w in stack.workers if w.process_type == "beat"],
                         r"Sending due task fleet: worker heartbeat") as sends:
            first_beat = stack.worker("beat", ready=BEAT_READY, **SENDS_AND_RUNS)
            wait_for(lambda: len(runs.times) >= 2, timeout=3 * PERIOD, what="two runs before the kill", stack=stack)
            before = len(sends.times)
            wait_for(lambda: len(sends.times) > before, timeout=2 * PERIOD, interval=0.01, what="a send", stack=stack)
            first_beat.kill()  # right after a send: its last_run_at may or may not be written yet
            killed = time.monotonic()
            stack.worker("beat", ready=BEAT_READY, **SENDS_AND_RUNS)
            wait_for(lambda: len([t for t in runs.times if t > killed + 0.5]) >= 2, timeout=4 * PERIOD,
                     what="two runs after the restart", stack=stack)
            time.sleep(0.5)  # a doubled send right behind the last would show by now

        gaps = [later - earlier for earlier, later in zip(runs.times, runs.times[1:], strict=False)]
        assert min(gaps) > PERIOD * 0.6, (gaps, stack.logs())  # never two runs within one period
        after = [t for t in runs.times if t > killed]
        assert after[0] - killed < 2 * PERIOD + 1, (gaps, stack.logs())  # no period skipped for long
