"""Periodic work timed under load (docs/reliability.md): what beat would send, sent by hand on a cadence
to a Redis broker, each tick timed from its send until its message left the broker (run and
acknowledged: Fleet's tasks acknowledge late, so a tick's message stays in its queue, then in
kombu's `unacked` hash, until the worker is done with it). Used by `python -m bench
deploy_burst` and tests/faults/test_deploy_burst.py.

    timer = TickTimer(broker_url, [Tick("agents.stats.sample", "periodic", period=10, send_every=2)])
    timer.start(); ...the load...; delays = timer.stop()   # {"agents.stats.sample": [0.03, ...]}
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass

import redis

UNACKED = "unacked"  # kombu's Redis transport: messages delivered and not yet acknowledged
POLL_SECONDS = 0.05


@dataclass(frozen=True)
class Tick:
    task: str
    queue: str
    period: float  # its beat period: a tick must be done within one period of being due
    send_every: float


class TickTimer:
    def __init__(self, broker_url: str, ticks: list[Tick]):
        self.broker_url = broker_url
        self.ticks = ticks
        self.delays: dict[str, list[float]] = {tick.task: [] for tick in ticks}
        self.sent: dict[str, int] = dict.fromkeys((tick.task for tick in ticks), 0)
        self.late: list[tuple[str, float]] = []  # ticks still pending at stop: (task, seconds so far)
        self._stop = threading.Event()
        self._drain_until = 0.0
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, drain: float = 0.0) -> dict[str, list[float]]:
        """Stop sending; with `drain`, keep timing the ticks already sent for up to that many
        seconds, so a tick sent just before the end counts as late only if it really is."""
        self._drain_until = time.monotonic() + drain
        self._stop.set()
        self._thread.join(timeout=30 + drain)
        return self.delays

    def _run(self) -> None:
        from fleet.celery import app  # after Django is set up (bench.__main__), as the benches import it

        broker = redis.Redis.from_url(self.broker_url)
        queues = sorted({tick.queue for tick in self.ticks})
        pending: dict[str, tuple[str, float]] = {}  # task id -> (task name, sent at)
        absent_once: set[str] = set()
        # A fixed schedule, as beat keeps: the next send is one period after the last was due, not
        # after this loop got round to it, so the cadence does not drift with the time a loop takes.
        next_send = dict.fromkeys((tick.task for tick in self.ticks), time.monotonic())
        with app.connection_for_write(self.broker_url) as conn:
            while not self._stop.is_set() or (pending and time.monotonic() < self._drain_until):
                now = time.monotonic()
                for tick in self.ticks if not self._stop.is_set() else ():
                    if now >= next_send[tick.task]:
                        task_id = str(uuid.uuid4())
                        app.send_task(tick.task, queue=tick.queue, task_id=task_id, connection=conn)
                        pending[task_id] = (tick.task, time.monotonic())
                        self.sent[tick.task] += 1
                        next_send[tick.task] = max(next_send[tick.task] + tick.send_every, now)
                waiting = b"".join([*(b"".join(broker.lrange(q, 0, -1)) for q in queues), *broker.hvals(UNACKED)])
                for task_id in list(pending):
                    if task_id.encode() in waiting:
                        absent_once.discard(task_id)
                    elif task_id in absent_once:  # gone twice in a row: not just between list and hash
                        name, sent = pending.pop(task_id)
                        absent_once.discard(task_id)
                        self.delays[name].append(time.monotonic() - sent - POLL_SECONDS)
                    else:
                        absent_once.add(task_id)
                time.sleep(POLL_SECONDS)
        self.late = [(name, time.monotonic() - sent) for name, sent in pending.values()]
