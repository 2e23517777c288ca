"""The one thread of a web process that runs synchronous Django code (views, the ORM).

The event loop hands it work and awaits the answer; the thread runs one call at a time, as a
sync worker runs one request at a time, so the process keeps one database connection and the
views need no thought about threads. A plain queue and `call_soon_threadsafe` make the hop
cheaper than an executor's futures (it is taken on every request).

    user = await in_django_thread(User.objects.get, pk=user_id)

Work that must not keep requests waiting behind it (the model gateway's settlement) takes a
SyncThread of its own, with its own connection.
"""

from __future__ import annotations

import asyncio
import functools
import queue
import threading


def _settle(future: asyncio.Future, result, error) -> None:
    if future.done():  # the awaiting side was cancelled (a client left): drop the answer
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class SyncThread:
    """One thread that runs the synchronous calls it is handed, one at a time, in order; it has
    its own database connection (Django's are per thread)."""

    def __init__(self, name: str):
        self.name = name
        self._work: queue.SimpleQueue = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    def _serve(self) -> None:
        while True:
            loop, future, call = self._work.get()
            try:
                result, error = call(), None
            except BaseException as exc:  # handed to the awaiting side, raised there
                result, error = None, exc
            try:
                loop.call_soon_threadsafe(_settle, future, result, error)
            except RuntimeError:  # that loop is closed: nobody waits for the answer
                pass

    def _ensure_started(self) -> None:
        # Started on first use, in the process that serves: a thread never survives a fork, and
        # the web server forks its workers after loading the application.
        if self._thread is not None and self._thread.is_alive():
            return
        with self._start_lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name=self.name, daemon=True)
                self._thread.start()

    def run(self, fn, /, *args, **kwargs) -> asyncio.Future:
        """Run `fn(*args, **kwargs)` in this thread; await the result (or its exception)."""
        self._ensure_started()
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._work.put((loop, future, functools.partial(fn, *args, **kwargs) if args or kwargs else fn))
        return future


_django = SyncThread("fleet-django")
in_django_thread = _django.run  # the door the edge uses: `await in_django_thread(fn, ...)`
