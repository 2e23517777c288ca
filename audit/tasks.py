"""Beat's purge of the audit log (AuditConfig.periodic_tasks)."""

from __future__ import annotations

from celery import shared_task

from .retention import PURGE_TASK, audit_purge


@shared_task(name=PURGE_TASK, soft_time_limit=600, time_limit=660)
def purge_audit_log() -> int:
    return audit_purge()
