"""Loopback is an allowed outbound target in these tests (keys of self-hosted fake providers)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _loopback_providers(settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.LLM_PROVIDER_ENDPOINTS = {}
    settings.DEFAULT_LLM_KEY = settings.DEFAULT_LLM_MODEL = ""
