"""Session tokens: HS256 JWTs valid for SESSION_JWT_LIFETIME (7 days)."""

from __future__ import annotations

import time
import uuid

import jwt
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from fleet.api.principal import Principal

from .models import User
from .user_cache import cached_user, remember_user, users_changed

ALGORITHM = "HS256"
AUDIENCE = "fleet-session"

# Tokens this process has verified: (signing key, token) -> (user id, token version, expiry).
# Checking a JWT's signature and claims was a seventh of the CPU of GET /agents/:id; a caller
# sends the same token again and again. Only valid tokens are kept; expiry is checked on every
# use; the key is part of the entry's key, so a new SECRET_KEY verifies afresh.
_verified: dict[tuple[str, str], tuple[uuid.UUID, int, int]] = {}
_MAX_VERIFIED = 4096  # beyond that the whole cache is dropped, so it never grows unbounded


def session_token_issue(*, user) -> str:
    now = timezone.now()
    payload = {
        "sub": str(user.id),
        "aud": AUDIENCE,
        "iat": int(now.timestamp()),
        "exp": int((now + settings.SESSION_JWT_LIFETIME).timestamp()),
        "jti": uuid.uuid4().hex,
        "ver": user.token_version,
    }
    return jwt.encode(payload, settings.SECRET_KEY, algorithm=ALGORITHM)


def _session_claims(token: str) -> tuple[uuid.UUID, int] | None:
    """(user id, token version) of a valid, unexpired session token, or None."""
    key = (settings.SECRET_KEY, token)
    known = _verified.get(key)
    if known is not None:
        user_id, version, expires = known
        return (user_id, version) if time.time() < expires else None
    try:
        payload = jwt.decode(
            token,
            settings.SECRET_KEY,
            algorithms=[ALGORITHM],
            audience=AUDIENCE,
            options={"require": ["exp", "sub", "aud"]},
        )
        user_id = uuid.UUID(str(payload["sub"]))
        version, expires = int(payload.get("ver", 0)), int(payload["exp"])
    except (jwt.PyJWTError, ValueError, TypeError):
        return None
    if len(_verified) >= _MAX_VERIFIED:
        _verified.clear()
    _verified[key] = (user_id, version, expires)
    return user_id, version


def user_from_session_token(token: str):
    """The active user a valid token names, or None."""
    claims = _session_claims(token)
    if claims is None:
        return None
    user_id, version = claims
    # Every authenticated request comes here: served from this process's short-lived cache
    # (keyed by the token version, so a revoked token never matches), else a primary-key read,
    # no ordering to compile, whose token version is checked against that same row.
    user = cached_user(user_id, version)
    if user is not None:
        return user
    user = next(iter(User.objects.filter(pk=user_id, is_active=True).order_by()[:1]), None)
    if user is None or version != user.token_version:
        return None
    remember_user(user)
    return user


def sessions_revoke(*, user) -> None:
    """End every session JWT of `user` at once (logout, password change, sign out everywhere)."""
    User.objects.filter(pk=user.pk).update(token_version=F("token_version") + 1)
    users_changed()  # now, and again once committed: no process keeps the old version cached
    transaction.on_commit(users_changed)
    user.refresh_from_db(fields=["token_version"])


def principal_from_session_token(token: str) -> Principal | None:
    """FLEET_SESSION_TOKEN_VERIFIER: a Bearer JWT or the service_auth cookie."""
    user = user_from_session_token(token)
    return Principal(user=user) if user else None
