"""The sandbox's model: NVIDIA's endpoint (NVIDIA_BASE_URL) with the owner's key, written into
the runtime's model configuration only (never an environment variable, a task argument or a log)."""

from __future__ import annotations

from django.conf import settings

from agents.models import Agent
from llm.selectors import own_key_value

from .policy import MODELS

PROVIDER = "nvidia"


def inference_key(agent: Agent) -> str:
    """The key the agent's model calls use: its owner's saved key, or the self-hosted fallback."""
    return own_key_value(user_id=agent.owner_id, provider=PROVIDER)


def model_ref(model: str) -> str:
    """OpenClaw names a model `<provider>/<model id>`; NVIDIA's ids carry their own prefix."""
    return f"{PROVIDER}/{model}"


def model_config_patch(model: str, key: str) -> dict:
    """The config.patch that makes `model` of the NVIDIA provider the runtime's default model."""
    return {
        "models": {"providers": {PROVIDER: {
            "baseUrl": settings.NVIDIA_BASE_URL, "apiKey": key, "api": "openai-completions",
            "models": [{"id": m, "name": m, "contextWindow": 128000, "maxTokens": 8192} for m in MODELS],
        }}},
        "agents": {"defaults": {"model": {"primary": model_ref(model)}}},
    }
