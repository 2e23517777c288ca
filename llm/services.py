"""Writes of provider keys, and the key test (list the provider's models with the key)."""

from __future__ import annotations

import logging

import requests
from django.db import transaction
from django.utils import timezone

from fleet import netsafety
from fleet.errors import Conflict, NotFound, ValidationFailed
from fleet.redaction import NOTHING_TO_KEEP, keeps_stored
from fleet.values import env_value_allowed

from . import providers
from .models import ProviderKey
from .selectors import KEY_NOT_FOUND, agents_using_key, base_url_of, own_key
from .signals import key_changed

logger = logging.getLogger(__name__)

MAX_KEY_CHARS = 4096


class KeyInUse(Conflict):
    code = "key_in_use"


def _clean_api_key(value: str, *, field: str = "apiKey") -> str:
    value = value.strip()
    if len(value) > MAX_KEY_CHARS:
        raise ValidationFailed({field: f"A key has at most {MAX_KEY_CHARS} characters."})
    if not env_value_allowed(value) or any(c.isspace() for c in value):
        raise ValidationFailed({field: "Control characters, spaces and line breaks are not allowed."})
    return value


def _clean_base_url(entry: dict, base_url: str | None) -> str:
    base_url = (base_url or "").strip()
    if not base_url:
        if entry["baseUrl"] is None:
            raise ValidationFailed({"baseUrl": f"{entry['name']} needs the server's base URL."})
        return ""
    try:
        netsafety.check_url(base_url)
    except netsafety.UnsafeTarget as exc:
        raise ValidationFailed({"baseUrl": str(exc)}) from None
    return base_url.rstrip("/")


def key_create(*, provider: str, label: str, api_key: str, base_url: str | None, created_by,
               user=None, workspace=None) -> ProviderKey:
    """Store a key for `user` or `workspace` (exactly one)."""
    entry = providers.provider(provider)
    if entry is None:
        raise ValidationFailed({"provider": f"Unknown model provider '{provider}'."})
    if keeps_stored(api_key):
        raise ValidationFailed({"apiKey": NOTHING_TO_KEEP})
    api_key = _clean_api_key(api_key)
    if entry["keyRequired"] and not api_key:
        raise ValidationFailed({"apiKey": f"{entry['name']} needs a key."})
    return ProviderKey.objects.create(
        user=user, workspace=workspace, provider=provider, label=label, api_key=api_key,
        base_url=_clean_base_url(entry, base_url), created_by=created_by,
    )


@transaction.atomic
def key_update(*, key: ProviderKey, label: str | None = None, api_key: str | None = None,
               base_url: str | None = None, base_url_given: bool = False) -> ProviderKey:
    """Change a key; `[REDACTED]` written back keeps the stored key."""
    key = ProviderKey.objects.select_for_update().get(pk=key.pk)
    reached_runtimes = (key.api_key, key.base_url)  # what agents using the key were given
    entry = providers.require(key.provider)
    if label is not None:
        key.label = label
    if api_key is not None and not keeps_stored(api_key):
        api_key = _clean_api_key(api_key)
        if entry["keyRequired"] and not api_key:
            raise ValidationFailed({"apiKey": f"{entry['name']} needs a key."})
        key.api_key = api_key
    if base_url_given:
        key.base_url = _clean_base_url(entry, base_url)
    key.save()
    if (key.api_key, key.base_url) != reached_runtimes:
        _announce_change(key)
    return key


def _announce_change(key: ProviderKey) -> None:
    """The agents using the key get it again once the change is committed (llm.signals)."""
    transaction.on_commit(lambda: key_changed.send(sender=ProviderKey, key_id=key.pk))


@transaction.atomic
def key_delete(*, key: ProviderKey) -> None:
    key = ProviderKey.objects.select_for_update().filter(pk=key.pk).first()
    if key is None:
        raise NotFound(KEY_NOT_FOUND)
    users = agents_using_key(key)
    if users:
        raise KeyInUse(f"The key is used by: {', '.join(users)}. Give those agents another key first.")
    key.delete()  # an agent choosing it meanwhile waits for this lock, then finds it gone


def key_test(*, key: ProviderKey) -> dict:
    """GET <baseUrl>/models with the key (through fleet.netsafety), and record how it went.
    The result names a count or an error code, never the key or the provider's body."""
    entry = providers.require(key.provider)
    url = base_url_of(key).rstrip("/") + "/models"
    headers = {"User-Agent": "Fleet-llm-key-test", "Accept": "application/json",
               **providers.auth_headers(entry, key.api_key)}
    result = _call(url, headers)
    key.last_tested_at = timezone.now()
    key.last_test_result = result
    key.save(update_fields=["last_tested_at", "last_test_result", "updated_at"])
    return result


def _call(url: str, headers: dict) -> dict:
    try:
        response = netsafety.safe_session().get(url, headers=headers, allow_redirects=False)
    except netsafety.UnsafeTarget:
        return {"ok": False, "error": "unsafe_target"}
    except requests.RequestException as exc:
        logger.info("llm key test: %s unreachable (%s)", url, type(exc).__name__)
        return {"ok": False, "error": "unreachable"}
    if response.status_code in (401, 403):
        return {"ok": False, "error": "unauthorized"}
    if not 200 <= response.status_code < 300:
        return {"ok": False, "error": f"http_{response.status_code}"}
    try:
        body = response.json()
    except ValueError:
        return {"ok": False, "error": "invalid_response"}
    models = body.get("data", body.get("models")) if isinstance(body, dict) else None
    if not isinstance(models, list):
        return {"ok": False, "error": "invalid_response"}
    return {"ok": True, "models": len(models)}


# The sandbox's route (PUT/DELETE /auth/provider-keys/:provider) sets one key per provider: a
# view of this store, writing the user's first key of that provider.
SANDBOX_PROVIDERS = ("nvidia",)


def require_sandbox_provider(provider: str) -> dict:
    if provider not in SANDBOX_PROVIDERS:
        raise NotFound(f"Unknown model provider '{provider}'.")
    return providers.require(provider)


@transaction.atomic
def own_key_set(*, user, provider: str, api_key: str) -> ProviderKey:
    """Store (or replace) the user's key of `provider`; `[REDACTED]` leaves a stored key as it is."""
    entry = require_sandbox_provider(provider)
    # Serialises two PUTs of one user: the second sees the first's row.
    type(user).objects.select_for_update().filter(pk=user.pk).first()
    key = own_key(user_id=user.pk, provider=provider)
    if keeps_stored(api_key):
        if key is None or not key.api_key:
            raise ValidationFailed({"key": NOTHING_TO_KEEP})
        return key
    api_key = _clean_api_key(api_key, field="key")
    if key is None:
        return ProviderKey.objects.create(user=user, provider=provider, label=entry["name"], api_key=api_key,
                                          created_by=user)
    if key.api_key != api_key:
        key.api_key = api_key
        key.save(update_fields=["api_key", "updated_at"])
        _announce_change(key)
    return key


def own_key_delete(*, user, provider: str) -> None:
    """Remove the user's key of `provider` (the one the sandbox uses); nothing stored is fine."""
    require_sandbox_provider(provider)
    key = own_key(user_id=user.pk, provider=provider)
    if key is not None:
        key_delete(key=key)
