"""A real worker holding an unacknowledged message (an ETA task, as an alert delivery waiting to
retry) survives a Redis outage and works again once Redis is back: kombu 5.7.0 made it exit
with "Unrecoverable error: AttributeError: 'NoneType' object has no attribute 'hostname'"
(fleet.kombu_fixes). Its broker is a private redis-server this test starts and stops."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import redis
from django.core.cache import cache

from fleet.celery import app
from fleet.heartbeat import HEARTBEAT_KEY
from fleet.tasks import worker_heartbeat
from tests.infra.private_redis import PrivateRedis
from tests.support import wait_until

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def private_redis(tmp_path):
    server = PrivateRedis(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def worker_on(private_redis, tmp_path):
    """A real `celery -A fleet worker` whose broker is the private Redis (cache: REDIS_URL's)."""
    name = f"broker-outage-{uuid.uuid4().hex[:8]}"
    log = tmp_path / "worker.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "fleet", "worker", "--pool=solo", "--loglevel=WARNING",
             "--without-gossip", "--without-mingle", "--without-heartbeat", "-n", f"{name}@%h"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=stderr,
            env={**os.environ, "CELERY_BROKER_URL": private_redis.url, "CELERY_TASK_ALWAYS_EAGER": "false"},
        )
    yield process, name, log
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _send(broker_url: str, **options) -> None:
    with app.connection_for_write(broker_url) as connection:
        worker_heartbeat.apply_async(connection=connection, **options)


@pytest.mark.worker
@pytest.mark.timeout(180)
def test_a_worker_holding_an_eta_task_survives_a_redis_outage(private_redis, worker_on):
    process, name, log = worker_on
    broker = redis.Redis.from_url(private_redis.url)
    _send(private_redis.url, countdown=600)  # received at once, held unacknowledged for ten minutes
    wait_until(lambda: broker.hlen("unacked") or process.poll() is not None, timeout=60, interval=0.1)
    assert process.poll() is None, log.read_text()[-3000:]

    private_redis.stop()
    time.sleep(8)  # the consumer loses the broker, closes its channel and starts reconnecting

    assert process.poll() is None, log.read_text()[-3000:]
    assert "Unrecoverable error" not in log.read_text()

    private_redis.start()
    cache.delete(HEARTBEAT_KEY)
    _send(private_redis.url)
    wait_until(lambda: (cache.get(HEARTBEAT_KEY) or {}).get("hostname", "").startswith(name)
               or process.poll() is not None, timeout=90, interval=0.2)
    assert process.poll() is None, log.read_text()[-3000:]
    assert "Unrecoverable error" not in log.read_text()
