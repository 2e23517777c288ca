"""Alerts fixtures: the outbound guard opened to loopback, and what would be published."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from alerts import tasks
from alerts.services import dispatch


@pytest.fixture(autouse=True)
def _alerts_test_settings(settings):
    # The real receivers of these tests listen on 127.0.0.1, which the outbound guard refuses.
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]


@pytest.fixture
def published(monkeypatch):
    """What would go to the broker: dispatch requests, and the deliveries given a deliver message."""
    sent = SimpleNamespace(dispatches=0, deliveries=[])

    def publish_dispatch(*args, **kwargs):
        sent.dispatches += 1

    monkeypatch.setattr(tasks.dispatch_deliveries, "apply_async", publish_dispatch)
    monkeypatch.setattr(dispatch, "deliveries_publish", lambda ids, **kwargs: sent.deliveries.extend(ids))
    return sent

