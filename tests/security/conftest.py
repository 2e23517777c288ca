"""Security tests: the outbound guard opened to loopback, where their receivers listen."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _loopback_receivers_allowed(settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
