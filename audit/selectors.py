"""Reading the audit log: filters, newest first, keyset pages (a cursor names the last row seen)."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from django.db.models import Q, QuerySet
from django.utils.dateparse import parse_datetime

from fleet.errors import ValidationFailed

from .models import AuditEntry


@dataclass(frozen=True)
class AuditFilter:
    actor: str = ""  # a user's id, or an e-mail (the row's label starts with it)
    action: str = ""  # exact, or a prefix ending in "." (`agent.`)
    target_type: str = ""
    target_id: str = ""
    result: str = ""
    since: datetime | None = None
    until: datetime | None = None


def cursor_of(entry: AuditEntry) -> str:
    return base64.urlsafe_b64encode(f"{entry.at.isoformat()}|{entry.pk}".encode()).decode().rstrip("=")


def _position(cursor: str) -> tuple[datetime, int]:
    try:
        at, _, pk = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode().partition("|")
        moment = parse_datetime(at)
        if moment is None:
            raise ValueError(at)
        return moment, int(pk)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValidationFailed({"cursor": ["Not a cursor this list gave."]}) from exc


def audit_entries(*, workspace_id: UUID | None, where: AuditFilter) -> QuerySet[AuditEntry]:
    """Rows matching `where`, newest first; one workspace's when `workspace_id` is given."""
    rows = AuditEntry.objects.all()
    if workspace_id is not None:  # its links: one per (row, workspace), so the join repeats no row
        rows = rows.filter(workspace_links__workspace_id=workspace_id)
    if where.actor:
        try:
            rows = rows.filter(actor_user_id=UUID(where.actor))
        except ValueError:
            rows = rows.filter(actor_label__istartswith=where.actor)
    if where.action:
        rows = rows.filter(action__startswith=where.action) if where.action.endswith(".") else \
            rows.filter(action=where.action)
    for column, value in (("target_type", where.target_type), ("target_id", where.target_id),
                          ("result", where.result)):
        if value:
            rows = rows.filter(**{column: value})
    if where.since is not None:
        rows = rows.filter(at__gte=where.since)
    if where.until is not None:
        rows = rows.filter(at__lt=where.until)
    return rows.order_by("-at", "-id")


def audit_page(rows: QuerySet[AuditEntry], *, cursor: str, limit: int) -> tuple[list[AuditEntry], str | None]:
    """One page after `cursor` ("" for the first) and the cursor of the next (None at the end)."""
    if cursor:
        at, pk = _position(cursor)
        rows = rows.filter(Q(at__lt=at) | Q(at=at, pk__lt=pk))
    page = list(rows[: limit + 1])
    more = len(page) > limit
    page = page[:limit]
    return page, (cursor_of(page[-1]) if more and page else None)
