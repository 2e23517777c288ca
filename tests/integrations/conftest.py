"""Fixtures of the integration tests: loopback is an allowed outbound target here (fake APIs)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _loopback_providers(settings):
    # Self-hosted provider URLs and the fake APIs of tests/infra/http.py live on 127.0.0.1.
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.INTEGRATION_ENDPOINTS = {}
