"""Alerts fixtures: the outbound guard opened to loopback, what would be published, and the
worker's part run in this process."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from alerts import tasks
from alerts.services import deliveries_dispatch, delivery_attempt, fanout, rules


@pytest.fixture(autouse=True)
def _alerts_test_settings(settings):
    # The real receivers of these tests listen on 127.0.0.1, which the outbound guard refuses.
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]


def _publish_with(monkeypatch, publish) -> None:
    # The two places that publish new deliveries: a dispatch (or the sweep) after its fan-out,
    # and a rule's test after its commit.
    for module in (fanout, rules):
        monkeypatch.setattr(module, "deliveries_publish", publish)


@pytest.fixture
def published(monkeypatch):
    """What would go to the broker: dispatch requests, and the deliveries given a deliver message."""
    sent = SimpleNamespace(dispatches=0, deliveries=[])

    def publish_dispatch(*args, **kwargs):
        sent.dispatches += 1

    monkeypatch.setattr(tasks.dispatch_deliveries, "apply_async", publish_dispatch)
    _publish_with(monkeypatch, lambda ids, **kwargs: sent.deliveries.extend(str(pk) for pk in ids))
    return sent


@pytest.fixture
def worker_in_process(monkeypatch):
    """The worker's part, run here at once instead of through the broker: a requested dispatch
    runs in this process, and each delivery it publishes gets its attempt here, as the
    `alerts.deliver` task would make it (test_worker_delivery.py runs a real worker)."""

    def attempt_each(ids, **kwargs):
        for pk in ids:
            delivery_attempt(delivery_id=pk)

    monkeypatch.setattr(tasks.dispatch_deliveries, "apply_async", lambda *args, **kwargs: deliveries_dispatch())
    _publish_with(monkeypatch, attempt_each)
