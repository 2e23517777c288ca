"""Workspace API keys: `fk_` + 32 random bytes (base64url), stored as an HMAC-SHA256 digest.

A key works only while it is unrevoked, its workspace exists (keys cascade with it), and
its issuer is an active member of that workspace. Its scopes are capped by the issuer's
current role, so demoting the issuer to viewer also takes `agents:write` from their keys.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from datetime import timedelta

from django.conf import settings
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from fleet.api.fields import uuid_or_none
from fleet.api.principal import API_KEY, Principal

from .models import ApiKey, Membership
from .roles import Role, scopes_allowed_for

KEY_PREFIX = "fk_"
VISIBLE_PREFIX_LENGTH = 11  # "fk_" + 8 characters, enough to tell keys apart in lists
MAX_KEY_LENGTH = 200  # anything longer is not one of ours; refuse before hashing
LAST_USED_RESOLUTION = timedelta(minutes=1)  # avoid a write on every request


def api_key_generate() -> str:
    return KEY_PREFIX + base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()


def api_key_digest(raw_key: str) -> str:
    return hmac.new(settings.SECRET_KEY.encode(), raw_key.encode(), hashlib.sha256).hexdigest()


def api_key_prefix(raw_key: str) -> str:
    return raw_key[:VISIBLE_PREFIX_LENGTH]


def principal_from_api_key(raw_key: str) -> Principal | None:
    """FLEET_API_KEY_VERIFIER: the principal of an active key, or None (one query)."""
    if not raw_key.startswith(KEY_PREFIX) or len(raw_key) > MAX_KEY_LENGTH:
        return None
    digest = api_key_digest(raw_key)
    key = next(iter(_active_keys().filter(digest=digest)[:1]), None)
    # The lookup is by digest; compare again in constant time so timing says nothing.
    if key is None or not hmac.compare_digest(key.digest, digest):
        return None
    now = timezone.now()
    if key.last_used_at is None or now - key.last_used_at > LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
    return _principal_of(key)


def active_key_principal(*, key_id) -> Principal | None:
    """The principal of the key `key_id` while it is active (a reference a ticket or a cookie
    carries, workspaces.principals), else None."""
    key = next(iter(_active_keys().filter(pk=uuid_or_none(key_id))[:1]), None) if uuid_or_none(key_id) else None
    return _principal_of(key) if key is not None else None


def _active_keys():
    """Unrevoked keys of active issuers, each with its issuer's role (None: they left)."""
    issuer_role = Membership.objects.filter(
        workspace_id=OuterRef("workspace_id"), user_id=OuterRef("created_by_id")
    ).values("role")[:1]
    return (
        ApiKey.objects.select_related("created_by")
        .annotate(issuer_role=Subquery(issuer_role))
        .filter(revoked_at__isnull=True, created_by__is_active=True, issuer_role__isnull=False)
        .order_by()  # one row by a unique column: no ordering to compile on every keyed request
    )


def _principal_of(key: ApiKey) -> Principal:
    return Principal(
        user=key.created_by,
        kind=API_KEY,
        api_key_id=key.id,
        workspace_id=key.workspace_id,
        scopes=frozenset(key.scopes) & scopes_allowed_for(Role.parse(key.issuer_role)),
        issuer_role=key.issuer_role,
    )
