"""/metrics under a real web server with two workers sums the counters of both: the Procfile's
web process (granian, fleet/web.py) and gunicorn with fleet/gunicorn_conf.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.support import free_loopback_port, wait_until

ROOT = Path(__file__).resolve().parents[2]


def _procfile_web(port: int) -> list[str]:
    """The Procfile's web command as a platform runs it (a shell, the venv's python first on
    PATH), on `port` of loopback, with 2 workers."""
    web = next(line for line in (ROOT / "Procfile").read_text().splitlines() if line.startswith("web:"))
    settings = f"BIND_ADDRESS=127.0.0.1 PORT={port} FLEET_PORT={port} WEB_CONCURRENCY=2"
    return ["/bin/sh", "-c", f"PATH={Path(sys.executable).parent}:$PATH {settings}; {web.removeprefix('web:')}"]


def _gunicorn(port: int) -> list[str]:
    return [str(Path(sys.executable).parent / "gunicorn"), "-c", "python:fleet.gunicorn_conf", "fleet.wsgi:application",
            "--bind", f"127.0.0.1:{port}", "--workers", "2", "--no-control-socket"]


def _get(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode()
    except OSError:
        return None


@pytest.fixture(params=[_procfile_web, _gunicorn], ids=["procfile", "gunicorn"])
def server(request, tmp_path):
    port = free_loopback_port()
    metrics_dir = tmp_path / "prometheus"
    metrics_dir.mkdir()
    (metrics_dir / "stale.db").write_bytes(b"left by an earlier run")
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir), "DEBUG": "true"}
    process = subprocess.Popen(request.param(port), cwd=ROOT, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: _get(f"http://127.0.0.1:{port}/metrics") is not None or process.poll() is not None,
                   timeout=60, interval=0.2)
        assert process.poll() is None, "the server exited"
        yield port, metrics_dir
    finally:
        process.terminate()
        process.wait(timeout=30)


def _requests_counted(metrics: str) -> float:
    return sum(float(v) for v in re.findall(r"^fleet_http_requests_total\{[^}]*\} (\S+)$", metrics, re.MULTILINE))


def test_metrics_are_read_from_the_workers_files_in_an_emptied_folder(server):
    port, metrics_dir = server
    assert not (metrics_dir / "stale.db").exists()

    for _ in range(20):  # fresh connections: either worker may take each
        _get(f"http://127.0.0.1:{port}/api/no-such-route")
    metrics = _get(f"http://127.0.0.1:{port}/metrics")

    assert metrics is not None
    assert _requests_counted(metrics) >= 20
    assert list(metrics_dir.glob("counter_*.db")), "the workers wrote no metric files"
