"""Reads of provider keys; access to the owner (user or workspace) is checked by the route."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from fleet.errors import NotFound
from fleet.redaction import shown

from . import providers
from .models import ProviderKey

KEY_NOT_FOUND = "Model provider key not found."


def keys_of_user(*, user) -> QuerySet[ProviderKey]:
    return ProviderKey.objects.filter(user=user).order_by("created_at", "id")


def keys_of_workspace(*, workspace) -> QuerySet[ProviderKey]:
    return ProviderKey.objects.filter(workspace=workspace).order_by("created_at", "id")


def key_of_user(*, user, key_id) -> ProviderKey:
    key = keys_of_user(user=user).filter(pk=key_id).first()
    if key is None:
        raise NotFound(KEY_NOT_FOUND)
    return key


def key_of_workspace(*, workspace, key_id) -> ProviderKey:
    key = keys_of_workspace(workspace=workspace).filter(pk=key_id).first()
    if key is None:
        raise NotFound(KEY_NOT_FOUND)
    return key


def key_record(key: ProviderKey) -> dict:
    """What a read shows: the key itself only as [REDACTED] (or "" when none is stored)."""
    return {
        "id": key.pk, "provider": key.provider, "label": key.label,
        "apiKey": shown(key.api_key), "baseUrl": key.base_url or None,
        "workspaceId": key.workspace_id, "createdAt": key.created_at, "updatedAt": key.updated_at,
        "lastTestedAt": key.last_tested_at, "lastTestResult": key.last_test_result,
    }


def agents_using_key(key: ProviderKey) -> list[str]:
    """The names of the agents whose model uses `key`, by the reverse relation of
    agents.AgentModel (llm sits below agents and never imports it); with "the platform default
    (DEFAULT_LLM_KEY)" when the setting names this key."""
    names = sorted(key.agent_models.values_list("agent__name", flat=True))
    if is_default_key(key.pk):
        names.append("the platform default (DEFAULT_LLM_KEY)")
    return names


def is_default_key(key_id) -> bool:
    return bool(settings.DEFAULT_LLM_KEY) and str(key_id) == settings.DEFAULT_LLM_KEY.strip().lower()


def default_key() -> ProviderKey | None:
    """The saved key DEFAULT_LLM_KEY names (None when unset or gone)."""
    key_id = settings.DEFAULT_LLM_KEY.strip()
    if not key_id:
        return None
    try:
        return ProviderKey.objects.filter(pk=key_id).first()
    except (ValueError, ValidationError):  # not a UUID: the system check says so
        return None


def base_url_of(key: ProviderKey) -> str:
    """Where the key's provider answers: the key's own base URL, else the provider's."""
    return key.base_url or providers.require(key.provider)["baseUrl"] or ""


def key_get(key_id) -> ProviderKey | None:
    return ProviderKey.objects.filter(pk=key_id).first()


def own_key(*, user_id, provider: str) -> ProviderKey | None:
    """The user's own key a runtime of theirs uses for `provider`: their first saved one (the
    sandbox's PUT /auth/provider-keys/:provider writes that one too)."""
    if not user_id:
        return None
    return ProviderKey.objects.filter(user_id=user_id, provider=provider).order_by("created_at", "id").first()


def own_key_value(*, user_id, provider: str) -> str:
    """The key a runtime of `user_id` uses for `provider`: the user's own, else (self-hosted
    only) the platform's NVIDIA_API_KEY for nvidia, else ""."""
    key = own_key(user_id=user_id, provider=provider)
    if key is not None and key.api_key:
        return key.api_key
    if settings.PLATFORM_MODE == "selfhosted" and provider == "nvidia":
        return settings.NVIDIA_API_KEY or ""
    return ""
