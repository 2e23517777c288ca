"""Who an audit row names: a user, or a workspace API key with its issuer, and from where."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from uuid import UUID

from fleet.api.principal import Principal
from fleet.api.throttling import IPRateThrottle


@dataclass(frozen=True)
class Actor:
    user: object | None = None
    label: str = ""
    key_id: UUID | None = None
    workspace_id: UUID | None = None  # a key's own workspace
    ip: str | None = None


NOBODY = Actor()


def client_ip(request) -> str | None:
    """The caller's address as the throttles see it (NUM_PROXIES decides X-Forwarded-For)."""
    ident = IPRateThrottle().get_ident(request)
    try:
        return str(ipaddress.ip_address(ident))
    except ValueError:  # a forwarded header that names no address
        return None


def actor_of_request(request, *, tried: str = "") -> Actor:
    """The signed-in user or key of a Django request (the console's session); `tried` names who
    an anonymous call claimed to be (the e-mail of a refused sign-in)."""
    if request is None:  # a sign-in checked outside a request (a shell's authenticate())
        return Actor(label=tried[:300])
    return actor_of(getattr(request, "user", None), getattr(request, "auth", None), client_ip(request), tried)


def actor_of(user, principal, ip: str | None, tried: str = "") -> Actor:
    if user is None or not user.is_authenticated:
        return Actor(label=tried[:300], ip=ip)
    if isinstance(principal, Principal):
        return Actor(user=user, label=principal.actor_label, key_id=principal.api_key_id,
                     workspace_id=principal.workspace_id, ip=ip)
    return Actor(user=user, label=user.email, ip=ip)


def actor_of_user(user) -> Actor:
    return Actor(user=user, label=getattr(user, "email", "") or "") if user is not None else NOBODY
