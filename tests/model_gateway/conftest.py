"""Fixtures of the gateway's tests: the fake model as the provider, priced, and an agent routed
through the gateway to it (tests/model_gateway/support.py)."""

from __future__ import annotations

import pytest

from model_gateway import allowances
from tests.infra.fake_model import FakeModel

from .support import Routed, price, route_through_gateway


@pytest.fixture(autouse=True)
def _loopback_providers(settings):
    settings.MODEL_GATEWAY_RATE_BOOK_SECONDS = 0  # each test's own prices, never an earlier test's
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.LLM_PROVIDER_ENDPOINTS = {}
    settings.DEFAULT_LLM_KEY = settings.DEFAULT_LLM_MODEL = ""


@pytest.fixture(autouse=True)
def _no_allowances_of_other_tests(monkeypatch):
    """This process's allowances (model_gateway/allowances.py) start empty in every test."""
    for name in ("_open", "_closed", "_wanted"):
        monkeypatch.setattr(allowances, name, {})


@pytest.fixture
def fake_provider():
    model = FakeModel().start()
    yield model
    model.stop()


@pytest.fixture
def priced(db, fake_provider):
    price(fake_provider.model_id)


@pytest.fixture
def routed(tenancy, fake_provider, priced) -> Routed:
    return route_through_gateway(tenancy.agent(status="running"), base_url=fake_provider.base_url)
