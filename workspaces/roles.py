"""Workspace roles, lowest to highest: viewer < editor < admin < owner; and key scopes."""

from __future__ import annotations

from enum import IntEnum


class Role(IntEnum):
    VIEWER = 1
    EDITOR = 2
    ADMIN = 3
    OWNER = 4

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, value: str) -> Role:
        return cls[value.upper()]

    @classmethod
    def choices(cls) -> list[tuple[str, str]]:
        return [(r.label, r.label.capitalize()) for r in cls]

    @classmethod
    def grantable(cls) -> tuple[Role, ...]:
        """Roles a member can be given; `owner` belongs to the creator and is never granted."""
        return (cls.VIEWER, cls.EDITOR, cls.ADMIN)


class Scope:
    AGENTS_READ = "agents:read"
    AGENTS_WRITE = "agents:write"
    WORKSPACES_READ = "workspaces:read"
    ALL = (AGENTS_READ, AGENTS_WRITE, WORKSPACES_READ)


def session_role(principal, member_role: Role | None) -> Role | None:
    """A session's role from its membership; a platform admin acts with at least `admin`
    everywhere (never `owner`: only the creator is), member or not."""
    if principal.is_platform_admin:
        return max(member_role or Role.ADMIN, Role.ADMIN)
    return member_role


def role_of_key(scopes) -> Role | None:
    """The role a key acts with inside its workspace: editor with agents:write, else viewer."""
    if Scope.AGENTS_WRITE in scopes:
        return Role.EDITOR
    if scopes:
        return Role.VIEWER
    return None


def scopes_allowed_for(role: Role) -> frozenset[str]:
    """Scopes a key may exercise while its issuer holds `role`: a key never outranks its issuer."""
    if role >= Role.EDITOR:
        return frozenset(Scope.ALL)
    return frozenset((Scope.AGENTS_READ, Scope.WORKSPACES_READ))
