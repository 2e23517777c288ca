"""A real Celery worker for tests, consuming from the Redis broker of REDIS_URL.

    def test_deploy_provisions_in_the_background(celery_worker_live):
        agent = ...  # the request enqueues with delay_on_commit()
        celery_worker_live.wait_until(lambda: Agent.objects.get(pk=agent.pk).status == "running")

The fixture asks for `transactional_db` (so the test runs as
`@pytest.mark.django_db(transaction=True)`): rows are really committed, `on_commit` callbacks
fire, and the worker thread, which opens its own connection, sees the same test database.
The worker runs in this process (pool "solo", one thread), so settings overrides made by the
test (`settings` fixture, smtp_server, ...) apply inside tasks too.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from celery import Celery
from celery.contrib.testing.worker import start_worker

from tests.support import need_service, wait_until


@dataclass
class LiveWorker:
    app: Celery
    worker: object  # celery.worker.WorkController

    def wait_until(self, predicate: Callable[[], object], timeout: float = 15.0,
                   interval: float = 0.05):
        """Poll `predicate` until it returns something truthy; fail the test on timeout."""
        return wait_until(predicate, timeout, interval)


def _redis_reachable(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=2).ping())
    except redis.RedisError:
        return False


@pytest.fixture
def celery_worker_live(transactional_db) -> LiveWorker:
    from fleet.celery import app

    redis_url = os.environ.get("REDIS_URL", "")
    need_service(bool(redis_url), "a live Celery worker needs REDIS_URL (a Redis broker)")
    need_service(_redis_reachable(redis_url), f"Redis at {redis_url} does not answer")
    broker = app.conf.broker_url or ""
    need_service(broker.startswith("redis"), f"the Celery broker is {broker!r}, not Redis")

    was_eager = app.conf.task_always_eager
    app.conf.task_always_eager = False
    # Messages left by earlier tests (enqueued with no worker running) must not run here.
    app.control.purge()
    try:
        with start_worker(
            app,
            pool="solo",
            concurrency=1,
            perform_ping_check=False,  # it needs a result backend; Fleet runs without one
            loglevel="WARNING",
            shutdown_timeout=30,
        ) as worker:
            yield LiveWorker(app=app, worker=worker)
    finally:
        app.conf.task_always_eager = was_eager
