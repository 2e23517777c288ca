"""A principal written down and read back: what a ticket or a cookie carries on behalf of the
caller that asked for it (fleet.edge.tickets, the gateway proxy's cookie, a terminal's ticket).

The reference names the credential, never its secret: a session by its user and the token
version it was issued under (signing out everywhere ends it), a key by its id (revoking the key,
or its issuer leaving the workspace, ends it). Reading it back checks all of that again.
"""

from __future__ import annotations

from accounts.models import User
from fleet.api.principal import Principal

from .keys import active_key_principal


def principal_ref(principal: Principal) -> dict:
    if principal.is_api_key:
        return {"kind": "api_key", "key": str(principal.api_key_id)}
    return {"kind": "session", "user": str(principal.user.pk), "version": principal.user.token_version}


def principal_from_ref(ref: dict) -> Principal | None:
    """The principal `ref` names, if its credential still holds; None otherwise."""
    if not isinstance(ref, dict):
        return None
    if ref.get("kind") == "api_key":
        return active_key_principal(key_id=ref.get("key"))
    if ref.get("kind") == "session":
        user = User.objects.filter(pk=ref.get("user"), is_active=True).first()
        if user is None or user.token_version != ref.get("version"):
            return None
        return Principal(user=user)
    return None
