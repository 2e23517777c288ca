"""Rows older than AUDIT_RETENTION_DAYS leave, in batches so one purge never holds a long lock."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .models import AuditEntry

PURGE_TASK = "audit.purge"
BATCH = 5000


def audit_purge(*, now=None) -> int:
    """Delete the expired rows; answers how many left."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.AUDIT_RETENTION_DAYS)
    removed = 0
    while True:
        with transaction.atomic():
            expired = AuditEntry.objects.filter(at__lt=cutoff).order_by("at", "id")
            ids = list(expired.values_list("pk", flat=True)[:BATCH])
            if not ids:
                return removed
            # A queryset's delete: the row's own delete() refuses, since only this purge removes rows.
            removed += AuditEntry.objects.filter(pk__in=ids).delete()[0]
