"""Single-use tickets: how a caller of the API hands a browser something it cannot otherwise
carry (a WebSocket cannot send headers; an agent's own origin never sees Fleet's cookie).

    ticket, expires_at = ticket_issue(purpose="gateway-proxy", claims={...}, seconds=60)
    claims = ticket_redeem(purpose="gateway-proxy", ticket=ticket)   # None the second time

The ticket is random; the cache keeps its claims under the ticket's digest (a leaked cache does
not give the ticket away) until it is redeemed or expires. Of two redeems at once, the one whose
delete removed the entry wins.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from django.core.cache import cache
from django.utils import timezone

TICKET_BYTES = 32


def _key(purpose: str, ticket: str) -> str:
    return f"ticket:{purpose}:{hashlib.sha256(ticket.encode()).hexdigest()}"


def ticket_issue(*, purpose: str, claims: dict, seconds: int) -> tuple[str, datetime]:
    ticket = secrets.token_urlsafe(TICKET_BYTES)
    cache.set(_key(purpose, ticket), claims, timeout=seconds)
    return ticket, timezone.now() + timedelta(seconds=seconds)


def ticket_redeem(*, purpose: str, ticket: str) -> dict | None:
    """The ticket's claims, once; None for an unknown, expired or already redeemed ticket."""
    if not ticket or len(ticket) > 200:
        return None
    key = _key(purpose, ticket)
    claims = cache.get(key)
    if claims is None or not cache.delete(key):
        return None
    return claims
