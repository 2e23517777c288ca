"""`make run`'s process manager: honcho, with supervision and the time a clean stop needs.

- A process that exits on its own is started again, after 1 s, then twice as long each time up
  to 30 s; one that stayed up for a minute starts from 1 s again. Plain honcho stops the whole
  stack when any one process ends, so a worker that exits on a broker outage took
  the web server down with it. A process that fails RESTART_LIMIT times within RESTART_WINDOW
  seconds is broken, not unlucky: the stack stops, with that process's return code, as honcho does.
- honcho kills (SIGKILL) whatever has not exited five seconds after its SIGTERM, a constant it
  offers no option for. The Celery worker's warm shutdown on the embedded filesystem broker takes
  about seven seconds (its polling consumer loop, then the pool's threads), so the stop waits
  STOP_GRACE_SECONDS instead.

Run as `python -m fleet.processes start web worker beat gateway` (any honcho command line).
"""

from __future__ import annotations

import datetime
import multiprocessing
import queue
import signal
import sys
from collections import deque
from dataclasses import dataclass, field

import honcho.command
import honcho.manager
from honcho.command import main

STOP_GRACE_SECONDS = 20  # a warm shutdown finishes the tasks in progress; then the stop kills
FIRST_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 30.0
STEADY_SECONDS = 60  # up this long, a process that exits again starts from the first backoff
RESTART_LIMIT = 5
RESTART_WINDOW_SECONDS = 120


@dataclass
class Restarts:
    """When one process exited, and so how long it waits before its next start."""

    exits: deque = field(default_factory=lambda: deque(maxlen=RESTART_LIMIT))
    backoff: float = FIRST_BACKOFF_SECONDS

    def exited(self, at: datetime.datetime, started: datetime.datetime | None) -> float | None:
        """Seconds to wait before starting it again, or None when it fails too often to go on."""
        if started is not None and (at - started).total_seconds() >= STEADY_SECONDS:
            self.backoff = FIRST_BACKOFF_SECONDS
        self.exits.append(at)
        window = datetime.timedelta(seconds=RESTART_WINDOW_SECONDS)
        if len(self.exits) == RESTART_LIMIT and at - self.exits[0] <= window:
            return None
        wait, self.backoff = self.backoff, min(self.backoff * 2, MAX_BACKOFF_SECONDS)
        return wait


class SupervisingManager(honcho.manager.Manager):
    """honcho's Manager whose loop starts an exited process again instead of stopping the rest."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._restarts: dict[str, Restarts] = {}
        self._started_at: dict[str, datetime.datetime] = {}
        self._due: dict[str, datetime.datetime] = {}  # process name -> when it starts again

    def loop(self):
        def _terminate(signum, frame):
            self._system_print(f"{honcho.manager.SIGNALS[signum]['name']} received\n")
            self.returncode = honcho.manager.SIGNALS[signum]["rc"]
            self._stop_all()

        signal.signal(signal.SIGTERM, _terminate)
        signal.signal(signal.SIGINT, _terminate)
        self._start()
        stop_started = None
        while True:
            try:
                message = self.events.get(timeout=0.1)
            except queue.Empty:
                message = None
            if message is not None:
                self._handle(message)
            if self._terminating:
                if stop_started is None:
                    stop_started = self._clock.now()
                if self._all_stopped():
                    break
                if self._clock.now() - stop_started > datetime.timedelta(seconds=STOP_GRACE_SECONDS):
                    self.kill()
            else:
                self._start_due()

    def _handle(self, message) -> None:
        if message.type == "line":
            self._printer.write(message)
        elif message.type == "start":
            self._processes[message.name]["pid"] = message.data["pid"]
            self._started_at[message.name] = message.time
            self._system_print(f"{message.name} started (pid={message.data['pid']})\n")
            if self._terminating:  # started again just as the stop began: it stops too
                self._procmgr.terminate(message.data["pid"])
        elif message.type == "stop":
            self._stopped(message.name, message.data["returncode"], message.time)

    def _stopped(self, name: str, returncode: int, at: datetime.datetime) -> None:
        self._processes[name]["returncode"] = returncode
        self._processes[name]["process"].join(timeout=5)
        if self._terminating:
            self._system_print(f"{name} stopped (rc={returncode})\n")
            return
        wait = self._restarts.setdefault(name, Restarts()).exited(at, self._started_at.get(name))
        if wait is None:
            self._system_print(f"{name} stopped (rc={returncode}) {RESTART_LIMIT} times within "
                               f"{RESTART_WINDOW_SECONDS} s: stopping everything\n")
            self.returncode = returncode
            self._stop_all()
            return
        self._system_print(f"{name} stopped (rc={returncode}) on its own: starting it again in {wait:g} s\n")
        self._due[name] = self._clock.now() + datetime.timedelta(seconds=wait)

    def _start_due(self) -> None:
        now = self._clock.now()
        for name, due in list(self._due.items()):
            if due <= now:
                del self._due[name]
                process = self._processes[name]
                process.pop("returncode", None)
                process["pid"] = None
                process["process"] = multiprocessing.Process(name=name, target=process["obj"].run,
                                                             args=(self.events, True))
                process["process"].start()

    def _stop_all(self) -> None:
        self._due.clear()  # a process waiting to start again stays stopped
        self.terminate()

    def _killall(self, force=False):
        """honcho's, but a process being started again has no pid yet: its start message
        signals it (_handle)."""
        for name, process in self._processes.items():
            if "returncode" in process or process.get("pid") is None:
                continue
            self._system_print(f"sending {'SIGKILL' if force else 'SIGTERM'} to {name} (pid {process['pid']})\n")
            (self._procmgr.kill if force else self._procmgr.terminate)(process["pid"])


if __name__ == "__main__":
    honcho.command.Manager = SupervisingManager
    sys.exit(main())
