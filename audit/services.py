"""Writing the audit log: one INSERT, inside the caller's transaction (no change without its
row, no row without its change)."""

from __future__ import annotations

from collections.abc import Iterable
from uuid import UUID

from .actors import NOBODY, Actor
from .models import OK, AuditEntry, AuditWorkspace
from .scopes import workspaces_of_target


def field_names(data) -> list[str]:
    """The top-level names of a request body or form: what changed, never a value."""
    if isinstance(data, dict):
        return sorted(str(name)[:100] for name in data)[:100]
    return []


def audit_record(*, action: str, source: str, actor: Actor = NOBODY, result: str = OK, target_type: str = "",
                 target_id: object = "", workspace_id: UUID | str | None = None,
                 detail: Iterable[str] = (), workspace_ids: Iterable[UUID] = ()) -> AuditEntry:
    """One row, linked to every workspace it belongs to: `workspace_id` (else the key's), the
    `workspace_ids` the caller read before the change, and those the target is in now (scopes.py).
    `detail` is names only (of fields, options, settings): callers never pass values."""
    entry = AuditEntry.objects.create(
        actor_user=actor.user, actor_label=actor.label[:300], actor_key_id=actor.key_id, actor_ip=actor.ip,
        source=source, action=action[:100], target_type=target_type[:60], target_id=str(target_id or "")[:100],
        workspace_id=workspace_id or actor.workspace_id, result=(result or OK)[:60],
        detail=[str(name)[:100] for name in detail],
    )
    linked = {*workspace_ids, *workspaces_of_target(target_type, target_id)}
    if entry.workspace_id is not None:
        linked.add(UUID(str(entry.workspace_id)))
    AuditWorkspace.objects.bulk_create([AuditWorkspace(entry=entry, workspace_id=ws) for ws in linked])
    return entry
