"""The HttpOnly `service_auth` cookie that carries a session JWT for browsers."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import jwt
from django.conf import settings

COOKIE_PATH = "/"


def session_cookie_set(response, *, token: str) -> None:
    """Set the cookie to `token`, expiring when the token does (7 days for a fresh one)."""
    expires_at = jwt.decode(token, options={"verify_signature": False})["exp"]
    max_age = max(0, math.ceil(expires_at - datetime.now(UTC).timestamp()))
    response.set_cookie(
        settings.SESSION_COOKIE_NAME_API,
        token,
        max_age=max_age,
        path=COOKIE_PATH,
        secure=settings.SESSION_COOKIE_SECURE_API,
        httponly=True,
        samesite="Lax",
    )


def session_cookie_clear(response) -> None:
    response.delete_cookie(settings.SESSION_COOKIE_NAME_API, path=COOKIE_PATH, samesite="Lax")
