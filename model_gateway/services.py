"""Writes of the gateway's per-agent limits."""

from __future__ import annotations

from agents.llm_model.choice import MODEL_NAME
from agents.models import Agent
from fleet.errors import ValidationFailed

from .models import GatewayLimits

MAX_ALLOWED_MODELS = 50
LIMIT_RANGES = {"requestsPerMinute": 1_000_000, "tokensPerMinute": 1_000_000_000}


def _limit(value, field: str, errors: dict) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= LIMIT_RANGES[field]:
        errors[field] = f"A whole number from 1 to {LIMIT_RANGES[field]}, or null for no limit."
        return None
    return value


def limits_set(*, agent: Agent, body) -> GatewayLimits:
    """PUT /agents/:id/model-gateway: the three limits replaced at once (absent: none); every
    bad field answered together."""
    if not isinstance(body, dict):
        raise ValidationFailed({"non_field_errors": "An object {requestsPerMinute, tokensPerMinute, allowedModels}."})
    errors: dict[str, str] = {}
    unknown = sorted(set(body) - {"requestsPerMinute", "tokensPerMinute", "allowedModels"})
    if unknown:
        errors[unknown[0]] = "Unknown field."
    calls = _limit(body.get("requestsPerMinute"), "requestsPerMinute", errors)
    tokens = _limit(body.get("tokensPerMinute"), "tokensPerMinute", errors)
    allowed = body.get("allowedModels") or []
    if not isinstance(allowed, list) or len(allowed) > MAX_ALLOWED_MODELS or not all(
            isinstance(name, str) and MODEL_NAME.fullmatch(name) for name in allowed):
        errors["allowedModels"] = f"Up to {MAX_ALLOWED_MODELS} model names (no spaces)."
    if errors:
        raise ValidationFailed(errors)
    row, _ = GatewayLimits.objects.update_or_create(agent=agent, defaults={
        "requests_per_minute": calls, "tokens_per_minute": tokens, "allowed_models": list(dict.fromkeys(allowed)),
    })
    return row


def limits_record(agent: Agent) -> dict:
    """What GET /agents/:id/model-gateway shows."""
    row = GatewayLimits.objects.filter(agent=agent).first()
    return {"modelRouting": agent.model_routing,
            "requestsPerMinute": row.requests_per_minute if row else None,
            "tokensPerMinute": row.tokens_per_minute if row else None,
            "allowedModels": list(row.allowed_models) if row else []}
