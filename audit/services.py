"""Writing the audit log: one INSERT, inside the caller's transaction (no change without its
row, no row without its change)."""

from __future__ import annotations

from collections.abc import Iterable
from uuid import UUID

from .actors import NOBODY, Actor
from .models import OK, AuditEntry


def field_names(data) -> list[str]:
    """The top-level names of a request body or form: what changed, never a value."""
    if isinstance(data, dict):
        return sorted(str(name)[:100] for name in data)[:100]
    return []


def audit_record(*, action: str, source: str, actor: Actor = NOBODY, result: str = OK, target_type: str = "",
                 target_id: object = "", workspace_id: UUID | str | None = None,
                 detail: Iterable[str] = ()) -> AuditEntry:
    """One row. `detail` is names only (of fields, options, settings): callers never pass values."""
    return AuditEntry.objects.create(
        actor_user=actor.user, actor_label=actor.label[:300], actor_key_id=actor.key_id, actor_ip=actor.ip,
        source=source, action=action[:100], target_type=target_type[:60], target_id=str(target_id or "")[:100],
        workspace_id=workspace_id or actor.workspace_id, result=(result or OK)[:60],
        detail=[str(name)[:100] for name in detail],
    )
