"""An agent whose model calls go through the gateway: its key a saved one whose base URL is a
loopback provider, and its own token, as its runtime would hold it; and the price tests and the
bench give the fake model (1 USD per million input tokens, 2 per million output). Used by the
gateway's tests and by bench/model_gateway.py."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from agents.gateway.tokens import usage_token_digest, usage_token_for
from agents.models import Agent, AgentModel, ModelRate, ModelRouting
from llm.models import ProviderKey

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


def price(model_id: str) -> None:
    """The rate book's price of `model_id`: 1 USD per million input tokens, 2 per million output."""
    ModelRate.objects.get_or_create(model=model_id, defaults={
        "input_usd_per_mtok": Decimal("1"), "output_usd_per_mtok": Decimal("2"), "effective_from": date(2020, 1, 1)})
