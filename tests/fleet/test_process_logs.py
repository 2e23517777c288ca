"""`make run`'s processes (the Procfile's web, its four workers, beat and gateway under honcho, through
fleet.processes, on the embedded broker), run for real for a beat cycle: idle they print nothing
at the default level, a request warning is printed once, the web process listens on loopback,
and Ctrl-C ends every process cleanly (rc=0, no ERROR line, nothing killed)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from django.core.management import call_command
from django.db import connection

from bench.__main__ import database_url
from tests.support import free_loopback_port, make_run_processes, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]

ROOT = Path(__file__).resolve().parents[2]
IDLE_SECONDS = 32  # beat's 10 s and 30 s jobs all come due at least once
# The last start-up line of each process.
STARTED = ("Started worker-", "runtime@", "provision@", "periodic@", "delivery@", "maxinterval ->",
           "Gateway listener shard")
PROCESSES = make_run_processes()


def _lines(log: Path) -> list[str]:
    return log.read_text(errors="replace").splitlines()


def test_idle_is_quiet_a_warning_prints_once_and_ctrl_c_stops_cleanly(tmp_path, docker_engine_url):
    call_command("setup_periodic_tasks", stdout=open(os.devnull, "w"))  # noqa: SIM115
    port = free_loopback_port()
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "DEBUG": "true",  # as make run
        "PORT": str(port), "FLEET_PORT": str(port),
        "DATABASE_URL": database_url(connection.settings_dict),
        # make run's embedded broker and cache, in a folder of our own (nothing left for other
        # tests); its worker takes about 7 s to stop, which fleet.processes leaves it.
        "REDIS_URL": "", "CELERY_BROKER_URL": "", "FLEET_VAR_DIR": str(tmp_path),
        "DOCKER_HOST": docker_engine_url, "WORKER_CONCURRENCY": "2",
        "PROVISION_CONCURRENCY": "1", "PERIODIC_CONCURRENCY": "1", "DELIVERY_CONCURRENCY": "1",
    }
    env.pop("LOG_LEVEL", None)
    env.pop("BIND_ADDRESS", None)
    log = tmp_path / "honcho.log"
    with open(log, "w") as out:
        honcho = subprocess.Popen(  # as make run starts them
            [sys.executable, "-m", "fleet.processes", "start", *PROCESSES], cwd=ROOT, env=env,
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True,  # a terminal of its own
        )
    try:
        wait_until(lambda: all(any(marker in line for line in _lines(log)) for marker in STARTED)
                   and any("ready." in line for line in _lines(log)), timeout=90)
        time.sleep(1)  # the last start-up lines (a banner prints in several writes)
        ready_at = len(_lines(log))
        time.sleep(IDLE_SECONDS)
        idle = _lines(log)[ready_at:]
        requests.get(f"http://127.0.0.1:{port}/no-such-page", timeout=10)
        wait_until(lambda: any('"GET /no-such-page' in line for line in _lines(log)), timeout=10)
        os.killpg(honcho.pid, signal.SIGINT)  # Ctrl-C reaches the terminal's foreground group
        honcho.wait(timeout=30)
    finally:
        if honcho.poll() is None:  # a failed wait: stop them all anyway (honcho's children have
            os.killpg(honcho.pid, signal.SIGINT)  # process groups of their own, so honcho stops them)
            try:
                honcho.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(honcho.pid, signal.SIGKILL)
                honcho.wait()
    lines = _lines(log)
    text = "\n".join(lines)

    assert idle == [], "\n".join(idle)
    assert sum("Not Found: /no-such-page" in line for line in lines) == 1, text
    assert re.search(rf"Listening at: http://127\.0\.0\.1:{port}\b", text), text
    assert honcho.returncode == 130  # what make run turns into "Fleet stopped."
    assert not [line for line in lines if "ERROR" in line or "Traceback" in line], text
    assert "SIGKILL" not in text, text
    stopped = re.findall(r"(\w+)\.1 stopped \(rc=(-?\d+)\)", text)
    assert sorted(stopped) == sorted((name, "0") for name in PROCESSES), text
