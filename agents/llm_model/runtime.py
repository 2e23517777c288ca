"""An agent's model in its runtime's own configuration.

- OpenClaw: `models.providers.<provider>` (base URL, key, wire format, the models with the rate
  book's prices, so the runtime's own cost figures are Fleet's) and
  `agents.defaults.model.{primary,fallbacks}`, through config.patch: live, no restart.
- Hermes: `model` (`provider: custom`, the base URL of the provider's OpenAI-compatible API, the
  key) and `fallback_providers` in `$HERMES_HOME/config.yaml`, which it re-reads before its next
  turn: no restart either. Not a `${VAR}` of `.env`: Hermes 0.19 resolves the provider before it
  re-reads `.env` in a turn, so a rotated key would reach only the turn after next (measured).
  config.yaml is a secrets file for the files API and exports, as openclaw.json is.

With `modelRouting: gateway` the provider each runtime is told of is Fleet's model gateway
(agents.internal_url.model_gateway_url) and its key is the agent's own token: the provider key never
enters the container. Fleet speaks the OpenAI and the Anthropic formats there; a Google key is
reached through Google's OpenAI-compatible API.

Applying the same model twice changes nothing. Only what Fleet owns is touched: the providers
of llm's catalog in OpenClaw, the `model` and `fallback_providers` entries marked `fleet: true`
in Hermes's config.yaml.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import yaml
from django.utils import timezone

from fleet.errors import Conflict
from llm import providers
from llm.selectors import base_url_of

from ..backends.engine import engine_call
from ..families import family_of
from ..files.dotenv import state_files_lock
from ..gateway import gateway_for
from ..gateway.tokens import usage_token_for
from ..internal_url import model_gateway_url
from ..models import Agent, ModelRouting, SandboxProfile
from ..rates.book import RateBook
from .choice import ModelChoice

# Marks the entries Fleet writes in config.yaml, the model and its fallbacks (Hermes ignores keys
# it does not know).
FLEET_ENTRY = "fleet"
# A server that takes no key (a local Ollama) still gets one: both runtimes refuse an empty key.
NO_KEY = "no-key"
# What OpenClaw is told of a model it cannot look up offline (models.catalogRefresh is off).
CONTEXT_WINDOW, MAX_TOKENS = 128_000, 8192
OPENCLAW_API = {"openai": "openai-completions", "anthropic": "anthropic-messages", "google": "google-generative-ai"}
# The OpenAI-compatible API of each wire format, under the provider's base URL (Hermes speaks it).
OPENAI_COMPATIBLE_PATH = {"openai": "", "anthropic": "", "google": "/openai"}


class ModelUnsupported(Conflict):
    code = "unsupported"
    default_message = "Fleet cannot write this agent's model configuration."


def model_unsupported_reason(agent: Agent) -> str | None:
    """Why Fleet cannot put a model into this agent's runtime, or None."""
    if family_of(agent.runtime_family).config_file and agent.is_external:
        return "An adopted agent whose runtime reads its model from a file cannot be given one by Fleet."
    return None


def runtime_model_apply(agent: Agent, choice: ModelChoice | None) -> None:
    """Put `choice` (None: no model from Fleet) into the running agent's runtime. Raises the
    gateway's and the engine's errors (AgentNotRunning, GatewayUnreachable, ...)."""
    reason = model_unsupported_reason(agent)
    if reason:
        raise ModelUnsupported(reason)
    config_file = family_of(agent.runtime_family).config_file
    if config_file:
        _apply_config_file(agent, config_file, choice)
    else:
        _apply_config_patch(agent, choice)


@dataclass(frozen=True)
class ProviderEndpoint:
    """What a runtime is told of its model provider: where to call, with which key, in which
    wire format (openai, anthropic, google)."""

    base_url: str
    api_key: str
    kind: str

    @property
    def openai_compatible_url(self) -> str:
        """The OpenAI-compatible API under it (what Hermes speaks)."""
        return self.base_url.rstrip("/") + OPENAI_COMPATIBLE_PATH[self.kind]


def provider_endpoint(agent: Agent | None, choice: ModelChoice) -> ProviderEndpoint:
    """The provider of `choice` as `agent`'s runtime must call it: the provider itself with the
    key (direct routing; no agent: direct), or Fleet's model gateway with the agent's token."""
    kind = providers.require(choice.key.provider)["kind"]
    if agent is not None and agent.model_routing == ModelRouting.GATEWAY:
        return ProviderEndpoint(model_gateway_url(), usage_token_for(agent),
                                "anthropic" if kind == "anthropic" else "openai")
    return ProviderEndpoint(base_url_of(choice.key), choice.key.api_key or NO_KEY, kind)


# -- OpenClaw ------------------------------------------------------------------------------


def openclaw_patch(choice: ModelChoice | None, present: set[str], *, endpoint: ProviderEndpoint | None = None,
                   day: date | None = None) -> dict:
    """The config.patch of `choice` called at `endpoint` (default: the provider, directly),
    removing the catalog's providers in `present` it no longer names (None: every one, and the
    default model that pointed at them)."""
    managed = {name: None for name in present if name in providers.IDS}
    if choice is None:
        return {"models": {"providers": managed}, "agents": {"defaults": {"model": None}}} if managed else {}
    provider_id = choice.key.provider
    endpoint = endpoint or provider_endpoint(None, choice)
    book, day = RateBook.load(), day or timezone.now().date()
    models = [{"id": name, "name": name, "contextWindow": CONTEXT_WINDOW, "maxTokens": MAX_TOKENS,
               **_cost(book, name, provider_id, day)} for name in choice.names]
    managed.pop(provider_id, None)
    return {
        "models": {"providers": {**managed, provider_id: {
            "baseUrl": endpoint.base_url, "apiKey": endpoint.api_key,
            "api": OPENCLAW_API[endpoint.kind], "models": models,
        }}},
        "agents": {"defaults": {"model": {
            "primary": f"{provider_id}/{choice.name}",
            "fallbacks": [f"{provider_id}/{name}" for name in choice.fallbacks],
        }}},
    }


def _cost(book: RateBook, model: str, provider: str, day: date) -> dict:
    """The rate book's price as OpenClaw's `cost` (USD per million tokens), when it knows one."""
    price, _ = book.price(model=model, provider=provider, day=day)
    if price is None:
        return {}
    return {"cost": {"input": float(price.input_usd_per_mtok), "output": float(price.output_usd_per_mtok),
                     "cacheRead": 0, "cacheWrite": 0}}


def _apply_config_patch(agent: Agent, choice: ModelChoice | None) -> None:
    gateway = gateway_for(agent)
    current = gateway.config_get()
    config = current.get("config") or {}
    present = set(((config.get("models") or {}).get("providers") or {}).keys())
    if agent.sandbox_profile == SandboxProfile.NEMOCLAW and choice is None:
        return  # the sandbox policy's model stays (sandbox.inference)
    endpoint = provider_endpoint(agent, choice) if choice is not None else None
    patch = openclaw_patch(choice, present, endpoint=endpoint)
    if patch:
        # The models list and the fallbacks shrink with the choice: replaced, never merged.
        replace = ["agents.defaults.model.fallbacks"]
        if choice is not None and choice.key.provider in present:
            replace.append(f"models.providers.{choice.key.provider}.models")
        gateway.config_patch(patch, base_hash=current.get("hash"), replace_paths=replace)


# -- Hermes --------------------------------------------------------------------------------


def hermes_config(text: str, choice: ModelChoice | None, *, endpoint: ProviderEndpoint | None = None) -> str:
    """config.yaml with Fleet's model entries set to `choice` called at `endpoint` (default: the
    provider, directly; None: removed), the rest kept."""
    config = yaml.safe_load(text) if text.strip() else {}
    if not isinstance(config, dict):
        raise ModelUnsupported("The agent's config.yaml does not hold a mapping; Fleet leaves it alone.")
    fallbacks = [entry for entry in config.get("fallback_providers") or []
                 if not (isinstance(entry, dict) and entry.get(FLEET_ENTRY))]
    if choice is None:
        if isinstance(config.get("model"), dict) and config["model"].get(FLEET_ENTRY):
            config.pop("model")
    else:
        endpoint = endpoint or provider_endpoint(None, choice)
        base_url, key = endpoint.openai_compatible_url, endpoint.api_key
        config["model"] = {"provider": "custom", "default": choice.name, "base_url": base_url, "api_key": key,
                           FLEET_ENTRY: True}
        fallbacks += [{"provider": "custom", "model": name, "base_url": base_url, "api_key": key, FLEET_ENTRY: True}
                      for name in choice.fallbacks]
    if fallbacks:
        config["fallback_providers"] = fallbacks
    else:
        config.pop("fallback_providers", None)
    return yaml.safe_dump(config, sort_keys=False, allow_unicode=True) if config else ""


def _apply_config_file(agent: Agent, config_file: str, choice: ModelChoice | None) -> None:
    with state_files_lock(agent):
        raw = engine_call(agent, lambda backend: backend.read_state_file(agent, config_file)) or b""
        text = raw.decode("utf-8", errors="replace")
        try:
            content = hermes_config(text, choice,
                                    endpoint=provider_endpoint(agent, choice) if choice is not None else None)
        except yaml.YAMLError:
            raise ModelUnsupported("The agent's config.yaml is not valid YAML; Fleet leaves it alone.") from None
        if content != text:
            engine_call(agent, lambda backend: backend.write_state_file(agent, config_file, content.encode()))
