"""Credential parsing for every API request.

Explicit headers (Authorization: Bearer, X-Api-Key, X-Service-Api-Key) beat the
`service_auth` cookie. Two explicit credentials of different kinds, or two different
keys, are refused with 400 conflicting_auth before either is verified. Verification
belongs to the apps that own the credentials (settings FLEET_SESSION_TOKEN_VERIFIER and
FLEET_API_KEY_VERIFIER), so the kernel imports no app.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from django.conf import settings
from django.utils.module_loading import import_string
from rest_framework.authentication import BaseAuthentication

from fleet.errors import ConflictingAuth, InvalidCredentials

from .origin import require_same_origin
from .principal import Principal

API_KEY_HEADERS = ("HTTP_X_API_KEY", "HTTP_X_SERVICE_API_KEY")
SESSION_COOKIE = "service_auth"


@dataclass(frozen=True)
class Credential:
    kind: str  # "session" or "api_key"
    value: str
    from_cookie: bool = False  # a browser sends it by itself: unsafe methods must prove same origin


def read_credential(request) -> Credential | None:
    """The one credential a request carries, or None; raises ConflictingAuth."""
    meta = request.META
    authorization = meta.get("HTTP_AUTHORIZATION", "").strip()
    keys = {meta[h].strip() for h in API_KEY_HEADERS if meta.get(h, "").strip()}
    # Conflicts are judged on presence alone, before any scheme is parsed: an Authorization
    # of any scheme (Basic too) beside a key is two explicit credentials.
    if len(keys) > 1:
        raise ConflictingAuth("Two different API keys were sent.")
    if authorization and keys:
        raise ConflictingAuth()
    if keys:
        return Credential("api_key", keys.pop())
    if authorization:
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise InvalidCredentials("The Authorization header must be 'Bearer <token>'.")
        return Credential("session", token.strip())
    cookie = request.COOKIES.get(SESSION_COOKIE, "").strip()
    return Credential("session", cookie, from_cookie=True) if cookie else None


@cache
def _verifier(setting_name: str):
    return import_string(getattr(settings, setting_name))


def verify_credential(credential: Credential) -> Principal:
    """Turn a credential into a principal or raise InvalidCredentials (401)."""
    setting = "FLEET_API_KEY_VERIFIER" if credential.kind == "api_key" else "FLEET_SESSION_TOKEN_VERIFIER"
    principal = _verifier(setting)(credential.value)
    if principal is None:
        raise InvalidCredentials()
    return principal


class FleetAuthentication(BaseAuthentication):
    """DRF authentication: request.user is the acting user, request.auth the Principal."""

    def authenticate(self, request):
        credential = read_credential(request)
        if credential is None:
            return None
        if credential.from_cookie:
            require_same_origin(request)
        principal = verify_credential(credential)
        return principal.user, principal

    def authenticate_header(self, request):
        return 'Bearer realm="api"'
