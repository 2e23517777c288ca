"""Alerts fixtures: the outbound guard opened to loopback, what would be published, and the
worker's part run in this process."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import pytest
from celery.app.routes import prepare as prepare_routes

from alerts import tasks
from alerts.services import deliveries_attempt, deliveries_dispatch, enqueue, fanout, rules


@pytest.fixture(autouse=True)
def _alerts_test_settings(settings):
    # The real receivers of these tests listen on 127.0.0.1, which the outbound guard refuses.
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]


def _publish_with(monkeypatch, publish) -> None:
    # The two places that publish new deliveries: a dispatch (or the sweep) after its fan-out,
    # and a rule's test after its commit.
    for module in (fanout, rules):
        monkeypatch.setattr(module, "deliveries_publish_by_channel", publish)


@pytest.fixture
def published(monkeypatch):
    """What would go to the broker: dispatch requests, and the deliveries given a deliver message."""
    sent = SimpleNamespace(dispatches=0, deliveries=[])

    def publish_dispatch(*args, **kwargs):
        sent.dispatches += 1

    monkeypatch.setattr(tasks.dispatch_deliveries, "apply_async", publish_dispatch)
    _publish_with(monkeypatch, lambda deliveries: sent.deliveries.extend(str(d.id) for d in deliveries))
    return sent


@pytest.fixture
def worker_in_process(monkeypatch):
    """The worker's part, run here at once instead of through the broker: a requested dispatch
    runs in this process, and the deliveries it publishes get their attempts here, as the
    `alerts.deliver_group` task would make them (test_worker_delivery.py runs a real worker)."""

    def attempt_each(deliveries):
        for ids in enqueue.deliveries_grouped(deliveries):
            deliveries_attempt(delivery_ids=ids)

    monkeypatch.setattr(tasks.dispatch_deliveries, "apply_async", lambda *args, **kwargs: deliveries_dispatch())
    _publish_with(monkeypatch, attempt_each)


@pytest.fixture
def broker_queue(monkeypatch):
    """Tasks published during the test go to a queue of their own on the real broker; `read()`
    takes them off it as (task name, first argument) pairs. No worker consumes that queue."""
    from fleet.celery import app

    name = f"test-alerts-{uuid.uuid4().hex[:12]}"
    monkeypatch.setattr(app.conf, "task_default_queue", name)
    # Every task, whatever its queue (CELERY_TASK_ROUTES sends deliveries to `delivery`).
    monkeypatch.setattr(app.amqp.router, "routes", prepare_routes({"*": {"queue": name}}))

    def read() -> list[tuple[str, object]]:
        found = []
        with app.connection_for_read() as connection:
            queue = connection.SimpleQueue(name)
            try:
                while True:
                    try:
                        message = queue.get(block=True, timeout=0.2)
                    except queue.Empty:
                        return found
                    args = message.decode()[0]
                    found.append((message.headers["task"], args[0] if args else None))
                    message.ack()
            finally:
                queue.close()

    yield SimpleNamespace(name=name, read=read)
    with app.connection_for_write() as connection:
        try:
            connection.default_channel.queue_delete(name)
        except Exception:  # never declared: nothing was published
            pass
