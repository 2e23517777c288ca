"""Fixes for kombu's Redis and filesystem transports, applied when the Celery application loads
(fleet.celery).

The Redis transport:

kombu 5.7.0 (the latest release, and what celery 5.7 needs) makes a worker exit on a broker
outage whenever it holds an unacknowledged message (an ETA task: an alert delivery waiting to
retry). On losing the broker, Celery's consumer closes its connection and ignores the
transport's connection errors (`ignore_errors(connection, connection.close)`). Closing the
Redis channel restores the unacknowledged messages, which needs a Redis client; by then the
channel's pool is gone (`Channel._disconnect_pools`) and its transport has no connection any
more (`transport.client` is None), so building a new pool in `Channel._connparams` raises
`AttributeError: 'NoneType' object has no attribute 'hostname'` instead of a connection error:
"Unrecoverable error", and the worker exits.

Nothing can be restored while the broker is away anyway: the messages stay in Redis's unacked
set, and the visibility timeout restores them. So, at the narrowest point, a channel whose
transport has lost its connection raises redis's ConnectionError (one of the transport's
`connection_errors`): the close goes on, and the consumer reconnects once Redis is back.
Remove this when a kombu release fixes it (tests/fleet/test_worker_broker_outage.py tells).

The filesystem transport (`make run`'s embedded broker): binding a queue creates the exchange
file before it locks it, so a second process declaring a queue at that moment (make run starts
four workers at once) reads the empty file, fails to parse it ("Unrecoverable error:
JSONDecodeError"), and its worker exits. The bind below creates, locks, reads and rewrites the
file in one locked step, an empty file being an empty table
(tests/fleet/test_kombu_filesystem_bind.py). A message has the same race: kombu creates its
file under the name workers look for, then locks it and writes it, and a worker that moves the
file away in between reads it empty (the same exit, and the message is lost). The put below
writes it under a name no worker reads and renames it into place whole.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid

from kombu.transport import filesystem as kombu_filesystem
from kombu.transport import redis as kombu_redis
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads
from redis.exceptions import ConnectionError as RedisConnectionError

_connparams = kombu_redis.Channel._connparams


def _connparams_or_connection_error(self, asynchronous=False):
    if self.connection is None or self.connection.client is None:
        raise RedisConnectionError("The broker connection is closed; unacknowledged messages stay in Redis "
                                   "until the visibility timeout restores them.")
    return _connparams(self, asynchronous=asynchronous)


def kombu_redis_patch() -> None:
    """Install the fix once (idempotent)."""
    if kombu_redis.Channel._connparams is not _connparams_or_connection_error:
        kombu_redis.Channel._connparams = _connparams_or_connection_error


def _queue_bind_locked(self, exchange, routing_key, pattern, queue):
    file = self._exchange_file(exchange)
    self.control_folder.mkdir(exist_ok=True)
    binding = kombu_filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
    try:
        with file.open("a+b", buffering=0) as f_obj:  # created if missing, never truncated unlocked
            kombu_filesystem.lock(f_obj, kombu_filesystem.LOCK_EX)
            try:
                f_obj.seek(0)
                raw = bytes_to_str(f_obj.read())
                queues = [kombu_filesystem.exchange_queue_t(*q) for q in (loads(raw) if raw.strip() else [])]
                if binding not in queues:
                    queues.insert(0, binding)
                    f_obj.seek(0)
                    f_obj.truncate()
                    f_obj.write(str_to_bytes(dumps(queues)))
            finally:
                kombu_filesystem.unlock(f_obj)
    except OSError as exc:
        raise kombu_filesystem.ChannelError(f"Cannot open {file}") from exc


def _table_or_empty(self, exchange):
    """kombu's get_table, an empty file (being created by a bind) read as no bindings yet."""
    file = self._exchange_file(exchange)
    try:
        with file.open("r") as f_obj:
            kombu_filesystem.lock(f_obj, kombu_filesystem.LOCK_SH)
            try:
                raw = f_obj.read()
            finally:
                kombu_filesystem.unlock(f_obj)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise kombu_filesystem.ChannelError(f"Cannot open {file}") from exc
    return [kombu_filesystem.exchange_queue_t(*q) for q in (loads(bytes_to_str(raw)) if raw.strip() else [])]


def _put_whole(self, queue, payload, **kwargs):
    """kombu's put, the file renamed into place once written (a rename within a folder is
    atomic): a worker never finds it empty. Its name is kombu's own."""
    name = f"{round(time.monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
    final = os.path.join(self.data_folder_out, name)
    partial = os.path.join(self.data_folder_out, f".{name}.part")  # no queue's name: never read
    try:
        with open(partial, "wb", buffering=0) as f_obj:
            f_obj.write(str_to_bytes(dumps(payload)))
        os.replace(partial, final)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.remove(partial)
        raise kombu_filesystem.ChannelError(f"Cannot add file {final!r} to directory") from exc


def kombu_filesystem_patch() -> None:
    """Install the locked bind, the tolerant table read and the whole put once (idempotent)."""
    kombu_filesystem.Channel._queue_bind = _queue_bind_locked
    kombu_filesystem.Channel.get_table = _table_or_empty
    kombu_filesystem.Channel._put = _put_whole
