"""The proxy's cookie: set on one agent's origin (host-only), HttpOnly, for GATEWAY_PROXY_COOKIE_HOURS.

Its value is signed, not secret: the agent it is for and a reference to the caller's credential
(workspaces.principals), never the credential. Signing out everywhere, revoking the key or
losing access to the agent ends it at the next request."""

from __future__ import annotations

from django.conf import settings
from django.core import signing

COOKIE_NAME = "fleet_gateway"
SALT = "fleet.agents.proxy.cookie"


def max_age_seconds() -> int:
    return int(settings.GATEWAY_PROXY_COOKIE_HOURS * 3600)


def cookie_value(*, agent_id, principal: dict) -> str:
    return signing.dumps({"agent": str(agent_id), "principal": principal}, salt=SALT, compress=True)


def cookie_claims(value: str, *, agent_id) -> dict | None:
    """The claims of a cookie signed by Fleet for this agent, younger than its lifetime."""
    try:
        claims = signing.loads(value, salt=SALT, max_age=max_age_seconds())
    except signing.BadSignature:
        return None
    if not isinstance(claims, dict) or claims.get("agent") != str(agent_id):
        return None
    return claims


def set_cookie_header(value: str, *, secure: bool) -> bytes:
    # No Domain attribute: the cookie stays on this agent's origin, no other agent sees it.
    attributes = [f"{COOKIE_NAME}={value}", "Path=/", f"Max-Age={max_age_seconds()}", "HttpOnly", "SameSite=Lax"]
    if secure:
        attributes.append("Secure")
    return "; ".join(attributes).encode("latin-1")
