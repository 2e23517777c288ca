"""Fixtures of the llm tests: loopback is an allowed outbound target here (fake providers)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _loopback_providers(settings):
    # Self-hosted base URLs and the fake providers of tests/infra/http.py live on 127.0.0.1.
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.LLM_PROVIDER_ENDPOINTS = {}
