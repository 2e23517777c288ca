"""Who is calling: one principal per request, whichever credential it came with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

SESSION = "session"
API_KEY = "api_key"

# A scope that grants more also grants these: a key that may change agents may read them.
IMPLIED_SCOPES = {"agents:read": ("agents:write",)}


@dataclass(frozen=True)
class Principal:
    """The authenticated caller.

    `user` is the account acting (for a key, the key's issuer). A workspace API key
    also carries the workspace it is bound to and its scopes; a session has neither
    and is limited only by the user's own memberships.
    """

    user: Any
    kind: str = SESSION
    api_key_id: UUID | None = None
    workspace_id: UUID | None = None
    scopes: frozenset[str] = field(default_factory=frozenset)
    # A key's issuer's current role label in the key's workspace: no key outranks its issuer.
    issuer_role: str | None = None

    @property
    def is_session(self) -> bool:
        return self.kind == SESSION

    @property
    def actor_label(self) -> str:
        """Who acts, as events name them: the user's e-mail, marked for a workspace API key."""
        return f"{self.user.email} (API key)" if self.is_api_key else self.user.email

    @property
    def is_api_key(self) -> bool:
        return self.kind == API_KEY

    @property
    def is_platform_admin(self) -> bool:
        # A key never carries platform-admin power, even when its issuer has it.
        return self.is_session and getattr(self.user, "is_platform_admin", False)

    def has_scope(self, scope: str) -> bool:
        if self.is_session or scope in self.scopes:
            return True
        return any(wider in self.scopes for wider in IMPLIED_SCOPES.get(scope, ()))
