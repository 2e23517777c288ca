"""The listener's worker threads for blocking work (database, cache), which own their database
connections: each keeps one between jobs (CONN_MAX_AGE applies) and closes it when the pool
shuts down. A ThreadPoolExecutor's threads would leave theirs open until the process exits,
which keeps the database busy after the listener has stopped (and a test database undroppable).
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Executor, Future

from django.db import connections

_STOP = None


class DbThreads(Executor):
    def __init__(self, size: int, *, name: str):
        if size < 1:
            raise ValueError("The listener needs at least one worker thread.")
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._closed = False
        self._threads = [threading.Thread(target=self._work, name=f"{name}-{n}", daemon=True) for n in range(size)]
        for thread in self._threads:
            thread.start()

    def submit(self, fn, /, *args, **kwargs) -> Future:
        if self._closed:
            raise RuntimeError("The listener's worker threads are shut down.")
        future: Future = Future()
        self._jobs.put((future, fn, args, kwargs))
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False, timeout: float | None = None) -> None:
        """Stop the threads once their current job ends; `timeout` bounds the wait for a hung job."""
        self._closed = True
        if cancel_futures:
            self._drain()
        for _ in self._threads:
            self._jobs.put(_STOP)
        if wait:
            for thread in self._threads:
                thread.join(timeout)

    def _drain(self) -> None:
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                return
            if job is not _STOP:
                job[0].cancel()

    def _work(self) -> None:
        try:
            while (job := self._jobs.get()) is not _STOP:
                future, fn, args, kwargs = job
                if not future.set_running_or_notify_cancel():
                    continue
                try:
                    future.set_result(fn(*args, **kwargs))
                except BaseException as exc:  # handed to the awaiting coroutine, which decides
                    future.set_exception(exc)
        finally:
            connections.close_all()  # this thread's connections only (they are thread-local)
