"""The one thread of a web process that runs synchronous Django code (views, the ORM).

The event loop hands it work and awaits the answer; the thread runs one call at a time, as a
sync worker runs one request at a time, so the process keeps one database connection and the
views need no thought about threads. A plain queue and `call_soon_threadsafe` make the hop
cheaper than an executor's futures (it is taken on every request).

    user = await in_django_thread(User.objects.get, pk=user_id)
"""

from __future__ import annotations

import asyncio
import functools
import queue
import threading

_work: queue.SimpleQueue = queue.SimpleQueue()
_thread: threading.Thread | None = None
_start_lock = threading.Lock()


def _settle(future: asyncio.Future, result, error) -> None:
    if future.done():  # the awaiting side was cancelled (a client left): drop the answer
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


def _serve() -> None:
    while True:
        loop, future, call = _work.get()
        try:
            result, error = call(), None
        except BaseException as exc:  # handed to the awaiting side, raised there
            result, error = None, exc
        try:
            loop.call_soon_threadsafe(_settle, future, result, error)
        except RuntimeError:  # that loop is closed: nobody waits for the answer
            pass


def _ensure_started() -> None:
    # Started on first use, in the process that serves: a thread never survives a fork, and
    # the web server forks its workers after loading the application.
    global _thread
    if _thread is not None and _thread.is_alive():
        return
    with _start_lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_serve, name="fleet-django", daemon=True)
            _thread.start()


def in_django_thread(fn, /, *args, **kwargs) -> asyncio.Future:
    """Run `fn(*args, **kwargs)` in the Django thread; await the result (or its exception)."""
    _ensure_started()
    loop = asyncio.get_running_loop()
    future = loop.create_future()
    _work.put((loop, future, functools.partial(fn, *args, **kwargs) if args or kwargs else fn))
    return future
