"""An agent whose model calls go through the gateway, its key a saved one whose base URL is the
loopback fake model (priced by an override: 1 USD per million input tokens, 2 per million
output), and its own token, as its runtime would hold it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

import pytest

from agents.gateway.tokens import usage_token_digest, usage_token_for
from agents.models import Agent, AgentModel, ModelRate, ModelRouting
from llm.models import ProviderKey
from tests.infra.fake_model import FakeModel

PROVIDER_KEY = "sk-provider-3c5e8a1f9b77d204"


@dataclass
class Routed:
    agent: Agent
    token: str
    key: ProviderKey

    @property
    def auth(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.token}", "content-type": "application/json"}


def route_through_gateway(agent: Agent, *, base_url: str, provider: str = "openai-compatible",
                          model: str = "fleet-fake-1") -> Routed:
    key = ProviderKey.objects.create(user=agent.owner, provider=provider, label="fake", api_key=PROVIDER_KEY,
                                     base_url=base_url)
    AgentModel.objects.create(agent=agent, key=key, name=model)
    token = usage_token_for(agent)
    Agent.objects.filter(pk=agent.pk).update(usage_token_digest=usage_token_digest(token),
                                             model_routing=ModelRouting.GATEWAY)
    agent.refresh_from_db()
    return Routed(agent, token, key)


@pytest.fixture(autouse=True)
def _loopback_providers(settings):
    settings.MODEL_GATEWAY_RATE_BOOK_SECONDS = 0  # each test's own prices, never an earlier test's
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.LLM_PROVIDER_ENDPOINTS = {}
    settings.DEFAULT_LLM_KEY = settings.DEFAULT_LLM_MODEL = ""


@pytest.fixture
def fake_provider():
    model = FakeModel().start()
    yield model
    model.stop()


@pytest.fixture
def priced(db, fake_provider):
    ModelRate.objects.create(model=fake_provider.model_id, input_usd_per_mtok=Decimal("1"),
                             output_usd_per_mtok=Decimal("2"), effective_from=date(2020, 1, 1))


@pytest.fixture
def routed(tenancy, fake_provider, priced) -> Routed:
    return route_through_gateway(tenancy.agent(status="running"), base_url=fake_provider.base_url)
