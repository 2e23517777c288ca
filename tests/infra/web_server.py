"""A real gunicorn (fleet/gunicorn_conf.py) on a free loopback port, serving the test database,
for tests that must go over HTTP: the rows a test commits are seen, and the server is stopped
before the database is flushed."""

from __future__ import annotations

import os
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


@contextmanager
def gunicorn_server(tmp_path: Path, *, env: dict[str, str], workers: int = 2) -> Iterator[str]:
    """The server's base URL once it answers. `env` adds to the test's environment; its output
    goes to `tmp_path/gunicorn.log`, whose end is shown if it exits instead of starting."""
    port = free_loopback_port()
    environment = {
        **os.environ,
        "DATABASE_URL": database_url(connection.settings_dict),
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "prometheus"),
        "FLEET_TEST_STATIC_FROM_APPS": "true",  # the console's theme and scripts (tests/settings.py)
        **env,
    }
    log_path = tmp_path / "gunicorn.log"
    url = f"http://127.0.0.1:{port}"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [Path(sys.executable).parent / "gunicorn", "-c", "python:fleet.gunicorn_conf", "fleet.wsgi:application",
             "--bind", f"127.0.0.1:{port}", "--workers", str(workers), "--no-control-socket"],
            cwd=ROOT, env=environment, stdout=log, stderr=subprocess.STDOUT,
        )
        try:
            wait_until(lambda: _answers(url) or process.poll() is not None, timeout=60, interval=0.2)
            assert process.poll() is None, log_path.read_text()[-2000:]
            yield url
        finally:
            process.terminate()
            process.wait(timeout=30)


def _answers(url: str) -> bool:
    try:
        return requests.get(f"{url}/api/health", timeout=2).status_code < 600
    except requests.RequestException:
        return False
