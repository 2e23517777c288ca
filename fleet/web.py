"""The `web` process (Procfile): Fleet's WSGI application under granian.

    python -m fleet.web --host 127.0.0.1 --port 8000 --workers 2 [other granian options]

Why granian and not gunicorn's sync workers (issue 19, measured side by side with
`python -m bench side_by_side`, same machine, same rounds): granian parses HTTP in Rust and keeps
client connections alive, where a sync worker parses in Python and closes the connection after
every answer; on 2 cores with 2 workers that is about 1.5 to 2 times the requests per second on
the small authenticated routes and a third less web CPU per request, for a few MB more memory.
gunicorn still runs the same application (fleet/gunicorn_conf.py) for anyone who prefers it.

Each worker runs one request at a time (one blocking thread: one database connection per
worker, as with sync workers); a worker that dies is started again. Prometheus counters of the
workers are summed through PROMETHEUS_MULTIPROC_DIR, emptied here once before the workers start
(what gunicorn_conf's on_starting does), and a respawned worker drops the live gauges of the
dead ones (`forget_dead_workers`, called by fleet.wsgi).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

DEFAULT_METRICS_DIR = Path(__file__).resolve().parent.parent / "var" / "prometheus"
APPLICATION = "fleet.wsgi:application"
DEFAULTS = ("--interface", "wsgi", "--blocking-threads", "1", "--no-ws", "--respawn-failed-workers")


def prepare_metrics_dir() -> Path:
    """PROMETHEUS_MULTIPROC_DIR (var/prometheus unless set), emptied: call before any worker starts."""
    path = Path(os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", str(DEFAULT_METRICS_DIR)))
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
    prepare_metrics_dir()
    record_bind_address(argv)
    from granian.cli import cli

    cli.main(args=[*DEFAULTS, *argv, APPLICATION], prog_name="granian")


if __name__ == "__main__":
    main(sys.argv[1:])
