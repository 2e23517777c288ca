"""The `web` process (Procfile): Fleet's ASGI application (fleet.asgi) under granian.

    python -m fleet.web --host 127.0.0.1 --port 8000 --workers 2 [other granian options]

Why granian and not gunicorn's sync workers (measured side by side with
`python -m bench side_by_side`, same machine, same rounds): granian parses HTTP in Rust and keeps
client connections alive, where a sync worker parses in Python and closes the connection after
every answer; on 2 cores with 2 workers that is about 1.5 to 2 times the requests per second on
the small authenticated routes and a third less web CPU per request, for a few MB more memory.
gunicorn still runs the same application (fleet/gunicorn_conf.py) for anyone who prefers it.

Each worker serves its requests on an event loop: streams and WebSockets wait there without a
thread, and every synchronous view runs in the worker's one Django thread, one request at a
time (one database connection per worker, as with sync workers; fleet.edge.wsgi). A worker
that dies is started again. Prometheus counters of the
workers are summed through PROMETHEUS_MULTIPROC_DIR, emptied here once before the workers start
(what gunicorn_conf's on_starting does), and a respawned worker drops the live gauges of the
dead ones (`worker_application`).

The application is loaded once, here, before granian forks its workers (`preload_application`):
the workers share its modules' pages with this process instead of each importing its own copy,
which takes a third off what the web server costs in memory (about 156 MB proportional for the
three processes idle, against 230; docs/performance.md).
"""

from __future__ import annotations

import gc
import logging
import os
import shutil
import sys
from pathlib import Path

from fleet.paths import var_dir

APPLICATION = "fleet.web:worker_application"  # a factory, called in each worker
DEFAULTS = ("--interface", "asgi", "--respawn-failed-workers", "--factory")


def prepare_metrics_dir() -> Path:
    """PROMETHEUS_MULTIPROC_DIR (the installation's var/prometheus unless set), emptied: call
    before any worker starts."""
    path = Path(os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", str(var_dir() / "prometheus")))
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True, exist_ok=True)
    return path


def forget_dead_workers() -> None:
    """Drop the live gauges of workers that no longer run (their counters stay in the sums)."""
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not folder or not os.path.isdir(folder):
        return
    from prometheus_client import multiprocess

    for name in os.listdir(folder):
        if name.startswith("gauge_live") and name.endswith(".db"):
            pid = name.rsplit("_", 1)[-1].removesuffix(".db")
            if pid.isdigit() and not _alive(int(pid)):
                multiprocess.mark_process_dead(int(pid), folder)


# Requests the master answers once before it forks, without credentials: what every worker
# would otherwise build for itself on its first requests (templates, DRF's negotiation and
# renderers, the error handling) is built once and shared. /api/health opens the database and
# Redis and runs every check, as a load balancer's first probe of each worker would: what a
# first connection sets up (psycopg's types, the backend's features, the Redis client) is then
# built once too (about 4 MB of the server's PSS, docs/performance.md). With the database or
# Redis down it answers 503 and the workers set them up for themselves, as before (one that does
# not answer at all holds the start as long as it would have held each worker's first request).
WARM_UP_PATHS = ("/", "/api/auth/me", "/api/agents", "/admin/login/", "/api/health")


def preload_application() -> None:
    """Import the application and everything a request reaches (the URLconf, with its views and
    the admin) in the master and answer WARM_UP_PATHS, so forked workers share those pages. No
    connection is left open (none may be shared across a fork); what is left collectable is
    collected and the rest frozen, so the workers' garbage collections do not write to the
    shared pages."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleet.settings")
    from django.core.cache import caches
    from django.db import connections
    from django.urls import get_resolver

    from fleet.asgi import django_application
    from fleet.health import health_connections_close

    get_resolver().url_patterns  # noqa: B018 - imports every URLconf, view and serializer
    # Through Django's WSGI handler directly: the edge's Django thread must not start before
    # the fork (a thread never survives one).
    _warm_up(django_application)
    connections.close_all()
    caches.close_all()
    for cache in caches.all(initialized_only=True):
        _redis_pools_disconnect(cache)
    health_connections_close()
    gc.collect()
    gc.freeze()


def _redis_pools_disconnect(cache) -> None:
    """Django's Redis cache keeps its connection pools for the life of the process (its close()
    is the base class's, which does nothing): disconnect them, or the workers would inherit the
    master's sockets."""
    client = vars(cache).get("_cache")  # RedisCache's client, made on first use
    for pool in getattr(client, "_pools", {}).values():
        pool.disconnect()


def _warm_up(application) -> None:
    from wsgiref.util import setup_testing_defaults

    logging.disable(logging.CRITICAL)  # their 401s are not worth a line at start-up
    try:
        for path in WARM_UP_PATHS:
            environ = {"REQUEST_METHOD": "GET", "PATH_INFO": path}
            setup_testing_defaults(environ)  # 127.0.0.1, in the default ALLOWED_HOSTS
            body = application(environ, lambda status, headers, exc_info=None: None)
            try:
                for _chunk in body:
                    pass
            finally:
                getattr(body, "close", lambda: None)()
    finally:
        logging.disable(logging.NOTSET)


def worker_application():
    """granian's target in each worker (`--factory`): the preloaded application, after the
    clean-up a respawned worker owes its dead predecessor."""
    from fleet.asgi import application

    forget_dead_workers()
    return application


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def record_bind_address(argv: list[str]) -> None:
    """BIND_ADDRESS as the workers will see it: the `--host` given (the Procfile passes
    BIND_ADDRESS itself), so the application's warning about bridged agents that cannot reach
    it (settings.BIND_ADDRESS, /api/health `warnings`) judges the address actually bound."""
    for index, arg in enumerate(argv):
        if arg == "--host" and index + 1 < len(argv):
            os.environ["BIND_ADDRESS"] = argv[index + 1]
        elif arg.startswith("--host="):
            os.environ["BIND_ADDRESS"] = arg.removeprefix("--host=")


def main(argv: list[str]) -> None:
    prepare_metrics_dir()  # before prometheus_client is imported: it picks multiprocess mode then
    record_bind_address(argv)
    preload_application()
    prepare_metrics_dir()  # again: the warm-up's requests are not the server's to count
    from granian.cli import cli

    cli.main(args=[*DEFAULTS, *argv, APPLICATION], prog_name="granian")


if __name__ == "__main__":
    main(sys.argv[1:])
