"""What an agent's model becomes in each runtime's configuration: OpenClaw's config.patch and
Hermes's config.yaml, with only Fleet's entries touched and the key itself out of config.yaml."""

from __future__ import annotations

import uuid
from datetime import date
from decimal import Decimal

import pytest
import yaml

from agents.gateway.tokens import usage_token_for
from agents.llm_model.choice import ModelChoice
from agents.llm_model.runtime import ModelUnsupported, hermes_config, openclaw_patch, provider_endpoint
from agents.models import Agent, ModelRate, ModelRouting
from llm.models import ProviderKey

pytestmark = pytest.mark.django_db


def choice(provider="openai-compatible", base_url="http://127.0.0.1:9/v1", api_key="sk-x", fallbacks=()):
    key = ProviderKey(provider=provider, label="k", api_key=api_key, base_url=base_url)
    return ModelChoice(key=key, name="m-1", fallbacks=tuple(fallbacks))


def test_openclaw_gets_the_provider_the_models_and_the_default_model():
    patch = openclaw_patch(choice(fallbacks=["m-2"]), present=set())

    provider = patch["models"]["providers"]["openai-compatible"]
    assert (provider["baseUrl"], provider["apiKey"], provider["api"]) == ("http://127.0.0.1:9/v1", "sk-x",
                                                                          "openai-completions")
    assert [m["id"] for m in provider["models"]] == ["m-1", "m-2"]
    assert patch["agents"]["defaults"]["model"] == {"primary": "openai-compatible/m-1",
                                                    "fallbacks": ["openai-compatible/m-2"]}


def test_openclaw_gets_the_rate_books_price_when_it_has_one():
    ModelRate.objects.create(model="m-1", provider="", input_usd_per_mtok=Decimal("1.5"),
                             output_usd_per_mtok=Decimal("4"), effective_from=date(2020, 1, 1))

    patch = openclaw_patch(choice(fallbacks=["m-2"]), present=set())
    models = patch["models"]["providers"]["openai-compatible"]["models"]

    assert models[0]["cost"] == {"input": 1.5, "output": 4.0, "cacheRead": 0, "cacheWrite": 0}
    assert "cost" not in models[1]  # unpriced: the rate book prices what the runtime reports


def test_anthropic_and_google_keys_speak_their_own_wire_format():
    anthropic = openclaw_patch(choice("anthropic", base_url=""), present=set())["models"]["providers"]["anthropic"]
    google = openclaw_patch(choice("google", base_url=""), present=set())["models"]["providers"]["google"]
    assert (anthropic["api"], anthropic["baseUrl"]) == ("anthropic-messages", "https://api.anthropic.com/v1")
    assert google["api"] == "google-generative-ai"


def test_a_provider_fleet_set_before_is_removed_and_others_are_kept():
    patch = openclaw_patch(choice(), present={"openai", "openai-compatible", "my-own"})
    assert patch["models"]["providers"]["openai"] is None
    assert "my-own" not in patch["models"]["providers"]


def test_no_model_removes_fleets_providers_and_the_default_model():
    assert openclaw_patch(None, present={"openai", "my-own"}) == {
        "models": {"providers": {"openai": None}}, "agents": {"defaults": {"model": None}}}
    assert openclaw_patch(None, present={"my-own"}) == {}


def test_a_key_that_stores_nothing_is_sent_as_a_placeholder():
    provider = openclaw_patch(choice(api_key=""), present=set())["models"]["providers"]["openai-compatible"]
    assert provider["apiKey"] == "no-key"


def test_hermes_config_sets_fleets_model_and_keeps_the_rest():
    text = "approvals:\n  mode: manual\nfallback_providers:\n- provider: openrouter\n  model: mine\n"

    config = yaml.safe_load(hermes_config(text, choice(fallbacks=["m-2"])))

    assert config["approvals"] == {"mode": "manual"}
    assert config["model"] == {"provider": "custom", "default": "m-1", "base_url": "http://127.0.0.1:9/v1",
                               "api_key": "sk-x", "fleet": True}
    assert config["fallback_providers"] == [
        {"provider": "openrouter", "model": "mine"},
        {"provider": "custom", "model": "m-2", "base_url": "http://127.0.0.1:9/v1", "api_key": "sk-x", "fleet": True},
    ]


def test_hermes_config_is_the_same_the_second_time_and_clears_to_what_was_not_fleets():
    text = "approvals:\n  mode: manual\nmodel:\n  provider: openrouter\n  default: theirs\n"
    once = hermes_config(text, choice(fallbacks=["m-2"]))
    assert hermes_config(once, choice(fallbacks=["m-2"])) == once
    assert yaml.safe_load(hermes_config(once, None)) == {"approvals": {"mode": "manual"}}
    assert yaml.safe_load(hermes_config(text, None))["model"]["default"] == "theirs"  # not Fleet's: kept


def test_hermes_reaches_google_through_its_openai_compatible_api():
    config = yaml.safe_load(hermes_config("", choice("google", base_url="")))
    assert config["model"]["base_url"] == "https://generativelanguage.googleapis.com/v1beta/openai"


def test_a_config_that_is_not_a_mapping_is_left_alone():
    with pytest.raises(ModelUnsupported):
        hermes_config("- a list\n", choice())


@pytest.mark.parametrize(("provider", "api"), [("openai-compatible", "openai-completions"),
                                               ("anthropic", "anthropic-messages"),
                                               ("google", "openai-completions")])
def test_through_the_gateway_openclaw_calls_fleet_with_the_agents_token_and_never_holds_the_key(
        settings, provider, api):
    settings.FLEET_INTERNAL_URL = "http://fleet.internal:8000"
    agent = Agent(pk=uuid.uuid4(), gateway_token="t" * 43, model_routing=ModelRouting.GATEWAY)
    picked = choice(provider, api_key="sk-secret-provider-key")

    patch = openclaw_patch(picked, present=set(), endpoint=provider_endpoint(agent, picked))

    entry = patch["models"]["providers"][provider]
    assert (entry["baseUrl"], entry["apiKey"], entry["api"]) == ("http://fleet.internal:8000/llm/v1",
                                                                 usage_token_for(agent), api)
    assert "sk-secret-provider-key" not in str(patch)


def test_through_the_gateway_hermes_calls_fleet_with_the_agents_token(settings):
    settings.FLEET_INTERNAL_URL = "http://fleet.internal:8000/"
    agent = Agent(pk=uuid.uuid4(), gateway_token="t" * 43, model_routing=ModelRouting.GATEWAY)
    picked = choice("anthropic", api_key="sk-secret-provider-key", fallbacks=["m-2"])

    text = hermes_config("", picked, endpoint=provider_endpoint(agent, picked))

    config = yaml.safe_load(text)
    assert (config["model"]["base_url"], config["model"]["api_key"]) == ("http://fleet.internal:8000/llm/v1",
                                                                         usage_token_for(agent))
    assert config["fallback_providers"][0]["base_url"] == "http://fleet.internal:8000/llm/v1"
    assert "sk-secret-provider-key" not in text
