"""Real web servers on a free loopback port, serving the test database, for tests that must go
over HTTP: the rows a test commits are seen, and the server is stopped before the database is
flushed.

- `procfile_web_server`: the Procfile's `web` command itself (granian through fleet/web.py), run
  through a shell as a platform runs it, with its defaults (`WEB_CONCURRENCY` unset: 2 workers,
  one request at a time each) unless `env` says otherwise.
- `gunicorn_server`: gunicorn with fleet/gunicorn_conf.py, the alternative docs/configuration.md
  describes.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests
from django.db import connection

from bench.__main__ import database_url
from tests.infra.runtimes import free_loopback_port
from tests.support import wait_until

ROOT = Path(__file__).resolve().parents[2]
# What a platform may have set that would change the Procfile's web command from its defaults.
PROCESS_SETTINGS = ("WEB_CONCURRENCY", "BIND_ADDRESS", "PORT", "FLEET_PORT")


def procfile_web_command() -> str:
    """The Procfile's `web:` command line, as written."""
    for line in (ROOT / "Procfile").read_text().splitlines():
        match = re.match(r"web:\s*(.+)$", line)
        if match:
            return match.group(1)
    raise AssertionError("The Procfile has no web process.")


def granian_pids(log: Path) -> tuple[int, dict[str, int]]:
    """The main PID and the live PID of each worker, as granian's log (`procfile_web_server`'s
    `tmp_path/web.log`) tells them."""
    text = log.read_text()
    main = int(re.search(r"Starting granian \(main PID: (\d+)\)", text).group(1))
    workers = dict(re.findall(r"Spawning (worker-\d+) with PID: (\d+)", text))  # the last spawn wins
    return main, {name: int(pid) for name, pid in workers.items()}


@contextmanager
def procfile_web_server(tmp_path: Path, *, env: dict[str, str]) -> Iterator[str]:
    """The Procfile's web process (granian) on loopback; `env` adds to the test's environment
    (without it, every process setting takes the Procfile's default)."""
    port = free_loopback_port()
    environment = _environment(tmp_path, env={"FLEET_PORT": str(port), **env}, unset=PROCESS_SETTINGS)
    environment["PATH"] = f"{Path(sys.executable).parent}:{environment['PATH']}"  # the venv's python
    with _serving(["sh", "-c", procfile_web_command()], port, environment, tmp_path / "web.log") as url:
        yield url


@contextmanager
def gunicorn_server(tmp_path: Path, *, env: dict[str, str], workers: int = 2) -> Iterator[str]:
    """gunicorn's base URL once it answers. `env` adds to the test's environment; its output
    goes to `tmp_path/gunicorn.log`, whose end is shown if it exits instead of starting."""
    port = free_loopback_port()
    command = [Path(sys.executable).parent / "gunicorn", "-c", "python:fleet.gunicorn_conf", "fleet.wsgi:application",
               "--bind", f"127.0.0.1:{port}", "--workers", str(workers), "--no-control-socket"]
    with _serving(command, port, _environment(tmp_path, env=env), tmp_path / "gunicorn.log") as url:
        yield url


def _environment(tmp_path: Path, *, env: dict[str, str], unset: tuple[str, ...] = ()) -> dict[str, str]:
    environment = {name: value for name, value in os.environ.items() if name not in unset}
    return {
        **environment,
        "DATABASE_URL": database_url(connection.settings_dict),
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "prometheus"),
        "FLEET_TEST_STATIC_FROM_APPS": "true",  # the console's theme and scripts (tests/settings.py)
        **env,
    }


@contextmanager
def _serving(command: list, port: int, environment: dict[str, str], log_path: Path) -> Iterator[str]:
    url = f"http://127.0.0.1:{port}"
    with open(log_path, "w") as log:
        # A session of its own: the server's workers are stopped with it (granian's master
        # forwards the signal; a shell's exec leaves granian as the process itself).
        process = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        try:
            wait_until(lambda: _answers(url) or process.poll() is not None, timeout=60, interval=0.2)
            assert process.poll() is None, log_path.read_text()[-2000:]
            yield url
        finally:
            _stop(process)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def _answers(url: str) -> bool:
    try:
        return requests.get(f"{url}/api/health", timeout=2).status_code < 600
    except requests.RequestException:
        return False
