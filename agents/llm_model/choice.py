"""Which model an agent answers with, and who may choose it.

A choice is `{keyId, name, fallbacks?}`: the key must be the acting user's own, or one of a
workspace the agent belongs to in which they are at least editor (a workspace API key: its own
workspace's keys). Otherwise 403 key_not_usable. Without a choice of its own an agent takes the
platform default (DEFAULT_LLM_KEY, DEFAULT_LLM_MODEL), when both are set.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from uuid import UUID

from django.conf import settings

from fleet.api.principal import Principal
from fleet.errors import Forbidden, ValidationFailed
from llm.models import ProviderKey
from llm.selectors import default_key, key_get, keys_of_user
from workspaces.models import Membership
from workspaces.roles import Role, session_role

from ..models import Agent, AgentModel, ModelRouting

MAX_FALLBACKS = 5
# A provider's model id: "gpt-4o", "claude-sonnet-4-20250514", "meta/llama-3.1-70b-instruct",
# "qwen2.5:7b" (Ollama). No spaces, quotes or control characters (it goes into YAML and JSON).
MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}")


class KeyNotUsable(Forbidden):
    code = "key_not_usable"
    default_message = "This provider key cannot be used for this agent."


@dataclass(frozen=True)
class ModelChoice:
    key: ProviderKey
    name: str
    fallbacks: tuple[str, ...] = ()
    is_default: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.fallbacks)


def routing_parse(value, *, field: str = "modelRouting") -> str:
    """A body's `modelRouting`: `direct` or `gateway` (400 naming `field` otherwise)."""
    if value not in ModelRouting.values:
        raise ValidationFailed({field: f"One of: {', '.join(ModelRouting.values)}."})
    return value


def default_routing() -> str:
    """DEFAULT_MODEL_ROUTING (a value the system check agents.E001 vouched for), else direct."""
    value = settings.DEFAULT_MODEL_ROUTING.strip().lower()
    return value if value in ModelRouting.values else ModelRouting.DIRECT


def choice_parse(value, *, principal: Principal, workspace_ids: Collection[UUID], field: str = "model") -> ModelChoice:
    """A body's `{keyId, name, fallbacks?}` checked: 400 naming each bad field, 403 when the
    caller may not use the key (an unknown key id too: whether another's key exists is not
    told)."""
    if not isinstance(value, dict):
        raise ValidationFailed({field or "non_field_errors": "An object {keyId, name, fallbacks?} is expected."})
    prefix = f"{field}." if field else ""
    errors: dict[str, str] = {}
    unknown = sorted(set(value) - {"keyId", "name", "fallbacks"})
    if unknown:
        errors[f"{prefix}{unknown[0]}"] = "Unknown field."
    key_id = _uuid(value.get("keyId"))
    if key_id is None:
        errors[f"{prefix}keyId"] = "The id of a saved provider key is required."
    name = value.get("name")
    if not isinstance(name, str) or not MODEL_NAME.fullmatch(name):
        errors[f"{prefix}name"] = "A model name: 1 to 200 letters, digits and . _ : / @ + - (no spaces)."
    fallbacks = value.get("fallbacks") or []
    if not isinstance(fallbacks, list) or len(fallbacks) > MAX_FALLBACKS or not all(
            isinstance(f, str) and MODEL_NAME.fullmatch(f) for f in fallbacks):
        errors[f"{prefix}fallbacks"] = f"Up to {MAX_FALLBACKS} model names of the same key."
    elif len({name, *fallbacks}) != len(fallbacks) + 1:
        errors[f"{prefix}fallbacks"] = "Each model appears once, the primary included."
    if errors:
        raise ValidationFailed(errors)
    key = key_get(key_id)
    if key is None or not key_usable(key, principal=principal, workspace_ids=workspace_ids):
        raise KeyNotUsable()
    return ModelChoice(key=key, name=name, fallbacks=tuple(fallbacks))


def _uuid(value) -> UUID | None:
    if isinstance(value, UUID):
        return value
    try:
        return UUID(value) if isinstance(value, str) else None
    except ValueError:
        return None


def key_usable(key: ProviderKey, *, principal: Principal, workspace_ids: Collection[UUID]) -> bool:
    """Whether `principal` may give an agent in `workspace_ids` this key."""
    if principal.is_api_key:
        return key.workspace_id is not None and key.workspace_id == principal.workspace_id \
            and key.workspace_id in workspace_ids
    if key.user_id is not None:
        return key.user_id == principal.user.pk
    if key.workspace_id not in workspace_ids:
        return False
    label = Membership.objects.filter(user_id=principal.user.pk, workspace_id=key.workspace_id) \
        .values_list("role", flat=True).first()
    role = session_role(principal, Role.parse(label) if label else None)
    return role is not None and role >= Role.EDITOR


def usable_keys(*, principal: Principal, workspace_ids: Collection[UUID]) -> list[ProviderKey]:
    """The keys `principal` may give an agent in `workspace_ids` (the console's key pickers)."""
    candidates = [] if principal.is_api_key else list(keys_of_user(user=principal.user))
    candidates += ProviderKey.objects.filter(workspace_id__in=list(workspace_ids)).order_by("created_at", "id")
    return [key for key in candidates if key_usable(key, principal=principal, workspace_ids=workspace_ids)]


def default_choice() -> ModelChoice | None:
    """The platform default, when DEFAULT_LLM_KEY names a saved key and DEFAULT_LLM_MODEL is set."""
    name = settings.DEFAULT_LLM_MODEL.strip()
    key = default_key() if name else None
    return ModelChoice(key=key, name=name, is_default=True) if key is not None else None


def agent_choice(agent: Agent) -> ModelChoice | None:
    """The agent's own model, else the platform default, else None (an agent read with
    select_related("llm_model__key") costs no query more)."""
    try:
        row = agent.llm_model
    except AgentModel.DoesNotExist:
        return default_choice()
    return ModelChoice(key=row.key, name=row.name, fallbacks=tuple(row.fallbacks))


def has_own_model(agent: Agent) -> bool:
    return AgentModel.objects.filter(agent=agent).exists()
