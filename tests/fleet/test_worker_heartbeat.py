import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.core.cache import cache

from fleet.celery import app
from fleet.heartbeat import HEARTBEAT_KEY, heartbeat_age, heartbeat_state
from fleet.tasks import worker_heartbeat
from tests.support import need_service, wait_until

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def worker_process():
    """A real `celery -A fleet worker` process on the Redis broker of REDIS_URL."""
    need_service(app.conf.broker_url.startswith("redis"), "a real worker needs a Redis broker (set REDIS_URL)")
    app.control.purge()
    name = f"kernel-heartbeat-{uuid.uuid4().hex[:8]}@%h"
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "fleet", "worker", "--pool=solo", "--loglevel=WARNING",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "-n", name],
        cwd=ROOT,
        env={**os.environ, "CELERY_TASK_ALWAYS_EAGER": "false"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    yield process
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.mark.worker
@pytest.mark.timeout(150)
def test_a_real_worker_beats_when_ready_and_on_every_heartbeat_task(worker_process):
    wait_until(lambda: cache.get(HEARTBEAT_KEY) or worker_process.poll() is not None, timeout=60, interval=0.2)
    assert worker_process.poll() is None, worker_process.stderr.read().decode()[-2000:]
    assert cache.get(HEARTBEAT_KEY)["hostname"].startswith("kernel-heartbeat-")
    assert heartbeat_state() == "ok"

    cache.delete(HEARTBEAT_KEY)
    worker_heartbeat.delay()

    wait_until(lambda: heartbeat_age() is not None, timeout=60, interval=0.2)
    assert heartbeat_age() < 60
