"""A followed log as server-sent events (the API's `Accept: text/event-stream`), bounded in time.

A follow holds one web worker for as long as it lasts: the Procfile's granian and gunicorn's
sync workers serve one request at a time each (and gunicorn kills a worker after `timeout`, 90 s,
without returning to its loop). So a follow lasts at most LOGS_FOLLOW_SECONDS (55 s by default)
and then ends; an EventSource reconnects by itself after `retry` ms, sending the id of the last
event it got (the ts of its last line) as Last-Event-ID, and the next follow starts after that
line. The console's agent page does not follow: it polls the lines after its last one
(agents/console/views.py), so open pages hold no worker. A comment every LOGS_HEARTBEAT_SECONDS
keeps proxies from closing a quiet stream and lets the server notice a client that left (the
write fails, the response closes).

The backend's iterator blocks on the engine, so a thread pumps it into a queue; closing the
iterator (it may be closed from another thread) ends the pump.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Iterator
from datetime import datetime

from ..backends.base import LogLine

logger = logging.getLogger(__name__)

RETRY_MS = 1000  # how soon the browser reconnects after a follow ends
QUEUE_LINES = 2000  # lines read ahead of a slow client before the pump waits
_END = object()


def log_line_data(line: LogLine) -> dict:
    return {"ts": line.ts.isoformat().replace("+00:00", "Z"), "stream": line.stream, "line": line.line}


def _event(line: LogLine) -> str:
    data = log_line_data(line)
    return f"id: {data['ts']}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def sse_events(lines: Iterator[LogLine], *, follow_seconds: float, heartbeat_seconds: float,
               started_at: datetime) -> Iterator[str]:
    """The SSE body: a `retry` hint, one event per line (`id` = its ts), a heartbeat comment
    when quiet, `event: end` when the workload's output ended (its container stopped), and
    at the cap `event: reconnect` whose id tells the browser where to resume."""
    pending: queue.Queue = queue.Queue(maxsize=QUEUE_LINES)
    stop = threading.Event()

    def pump():
        try:
            for line in lines:
                while not stop.is_set():
                    try:
                        pending.put(line, timeout=0.5)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
        except Exception:  # the engine failed mid-stream: the client sees the end and reconnects
            logger.warning("Reading a followed log failed", exc_info=True)
        finally:
            while not stop.is_set():
                try:
                    pending.put(_END, timeout=0.5)
                    break
                except queue.Full:
                    continue

    reader = threading.Thread(target=pump, daemon=True, name="fleet-logs-follow")
    reader.start()
    deadline = time.monotonic() + follow_seconds
    last_id = started_at.isoformat().replace("+00:00", "Z")
    try:
        yield f"retry: {RETRY_MS}\n\n"
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                yield f"event: reconnect\nid: {last_id}\ndata: {{}}\n\n"
                return
            try:
                item = pending.get(timeout=min(heartbeat_seconds, remaining))
            except queue.Empty:
                yield ": heartbeat\n\n"
                continue
            if item is _END:
                yield "event: end\ndata: {}\n\n"
                return
            event = _event(item)
            last_id = log_line_data(item)["ts"]
            yield event
    finally:
        stop.set()
        close = getattr(lines, "close", None)
        if close is not None:
            close()
        reader.join(timeout=2)
