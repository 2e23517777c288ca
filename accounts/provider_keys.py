"""A user's own model-provider keys (PUT/DELETE /auth/provider-keys/:provider).

The key is written, replaced or removed, never read back through the API; the sandbox app
reads it (`provider_key_of`) only to hand it to a runtime's model configuration.
"""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from fleet.errors import NotFound, ValidationFailed

from .models import ProviderKey, User

REDACTED = "[REDACTED]"  # written back, it keeps the stored value
PROVIDERS = tuple(ProviderKey.Provider.values)


def require_provider(provider: str) -> str:
    if provider not in PROVIDERS:
        raise NotFound(f"Unknown model provider '{provider}'.")
    return provider


@transaction.atomic
def provider_key_set(*, user: User, provider: str, key: str) -> ProviderKey:
    """Store (or replace) the user's key; `[REDACTED]` leaves a stored key as it is."""
    require_provider(provider)
    row = ProviderKey.objects.select_for_update().filter(user=user, provider=provider).first()
    if key == REDACTED:
        if row is None:
            raise ValidationFailed({"key": "No key is stored yet; send the key itself."})
        return row
    if row is None:
        return ProviderKey.objects.create(user=user, provider=provider, key=key)
    row.key = key
    row.save(update_fields=["key", "updated_at"])
    return row


def provider_key_delete(*, user: User, provider: str) -> bool:
    """Remove the user's key; True when there was one."""
    require_provider(provider)
    deleted, _ = ProviderKey.objects.filter(user=user, provider=provider).delete()
    return bool(deleted)


def provider_key_of(*, user_id, provider: str) -> str:
    """The key a runtime of `user_id` uses for `provider`: the user's own, else (self-hosted
    only) the platform's fallback setting, else ""."""
    row = ProviderKey.objects.filter(user_id=user_id, provider=provider).first() if user_id else None
    key = row.key if row is not None else None
    if isinstance(key, str) and key:
        return key
    if settings.PLATFORM_MODE == "selfhosted" and provider == ProviderKey.Provider.NVIDIA:
        return settings.NVIDIA_API_KEY or ""
    return ""
