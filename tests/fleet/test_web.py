"""fleet.web, the Procfile's web process: its metrics folder and a respawned worker's clean-up."""

from __future__ import annotations

import os

from fleet import web


def test_the_metrics_folder_is_emptied_before_the_workers_start(tmp_path, monkeypatch):
    folder = tmp_path / "prometheus"
    folder.mkdir()
    (folder / "counter_123.db").write_bytes(b"left by an earlier run")
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(folder))

    assert web.prepare_metrics_dir() == folder
    assert list(folder.iterdir()) == []


def test_a_dead_workers_live_gauges_are_dropped_and_the_living_ones_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    dead = 2**22 + 12345  # above the kernel's pid_max default: no such process
    for name in (f"gauge_livesum_{dead}.db", f"gauge_livesum_{os.getpid()}.db", f"counter_{dead}.db"):
        (tmp_path / name).write_bytes(b"")

    web.forget_dead_workers()

    assert sorted(p.name for p in tmp_path.iterdir()) == [f"counter_{dead}.db", f"gauge_livesum_{os.getpid()}.db"]


def test_each_worker_gets_the_preloaded_application_after_cleaning_up(tmp_path, monkeypatch):
    from fleet.asgi import application

    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    dead = 2**22 + 54321
    (tmp_path / f"gauge_livesum_{dead}.db").write_bytes(b"")

    assert web.worker_application() is application
    assert list(tmp_path.iterdir()) == []


PRELOAD_PROBE = """
import gc, os, sys
from fleet.web import preload_application
preload_application()
fds = [f"/proc/self/fd/{fd}" for fd in os.listdir("/proc/self/fd")]
sockets = [fd for fd in fds if os.path.exists(fd) and os.readlink(fd).startswith("socket:")]  # listing's own fd: gone
views = ("agents.api.lifecycle", "agents.console.views")
from django.db import connections
database = connections["default"]
talked = database.vendor != "postgresql" or "pg_version" in vars(database)  # cached from a live connection
print(len(sockets), gc.get_freeze_count() > 0, all(name in sys.modules for name in views), talked)
"""


def test_the_master_loads_every_view_and_keeps_no_connection_to_share_with_its_forks():
    """What the workers inherit: the modules a request reaches, loaded, warmed up and frozen,
    what a first database connection sets up (the warm-up's /api/health), and no open socket (a
    database or Redis connection shared across a fork answers two processes at once). The
    warm-up's requests say nothing in the log."""
    import subprocess
    import sys

    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "fleet.settings", "DEBUG": "true"}
    probe = subprocess.run([sys.executable, "-c", PRELOAD_PROBE], capture_output=True, text=True,
                           timeout=120, env=env, check=True)

    assert probe.stdout.split() == ["0", "True", "True", "True"]
    assert not [line for line in probe.stderr.splitlines() if any(path in line for path in web.WARM_UP_PATHS[1:])]


def test_the_workers_log_requests_and_djangos_warnings_as_the_master_set_them_up(tmp_path):
    import subprocess
    import sys
    import urllib.error
    import urllib.request
    from pathlib import Path

    from tests.support import free_loopback_port, wait_until

    root = Path(__file__).resolve().parents[2]
    port = free_loopback_port()
    procfile_web = next(line for line in (root / "Procfile").read_text().splitlines() if line.startswith("web:"))
    settings = f"BIND_ADDRESS=127.0.0.1 PORT={port} FLEET_PORT={port} WEB_CONCURRENCY=2"
    command = f"PATH={Path(sys.executable).parent}:$PATH {settings}; {procfile_web.removeprefix('web:')}"
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "prometheus"), "DEBUG": "true"}
    log = tmp_path / "web.log"

    def answered(path: str) -> int | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code
        except OSError:
            return None

    with log.open("wb") as output:
        server = subprocess.Popen(["/bin/sh", "-c", command], cwd=root, env=env,
                                  stdout=output, stderr=subprocess.STDOUT)
        try:
            wait_until(lambda: answered("/api/health") is not None or server.poll() is not None,
                       timeout=60, interval=0.2)
            assert server.poll() is None, log.read_text()[-2000:]
            statuses = {answered(f"/api/no-such-route-{n}") for n in range(6)}  # fresh connections: both workers
        finally:
            server.terminate()
            server.wait(timeout=30)

    text = log.read_text()
    assert statuses == {404}
    for n in range(6):
        assert f'"GET /api/no-such-route-{n} HTTP/1.1" 404' in text  # granian's access log
        assert f"Not Found: /api/no-such-route-{n}" in text  # Django's request logger
