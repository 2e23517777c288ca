"""PUT /agents/:id/backup-policy: an agent's schedule, retention and destination, set at once."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from agents.models import Agent
from fleet.errors import ValidationFailed
from fleet.redaction import NOTHING_TO_KEEP, keeps_stored

from ..destinations import destination_url_error
from ..models import BackupPolicy
from ..schedule import next_run_after, schedule_error


@dataclass(frozen=True)
class DestinationIn:
    """A policy's own S3-compatible bucket as written: `[REDACTED]` credentials mean "keep the
    stored ones" (only for the same URL: new endpoints never receive the old credentials)."""

    url: str
    access_key_id: str
    secret_access_key: str
    region: str = ""


@transaction.atomic
def backup_policy_set(*, agent: Agent, schedule: str, keep: int, destination: DestinationIn | None) -> BackupPolicy:
    """Create or replace the agent's policy; its next run is the schedule's next time from now."""
    stored = BackupPolicy.objects.select_for_update().filter(agent=agent).first()
    errors: dict[str, str] = {}
    if reason := schedule_error(schedule):
        errors["schedule"] = reason
    if keep < 1:
        errors["keep"] = "Keep at least one backup."
    access_key_id = secret_access_key = None
    url = region = ""
    if destination is not None:
        if reason := destination_url_error(destination.url):
            errors["destination.url"] = reason
        same_url = stored is not None and stored.destination_url == destination.url
        access_key_id = _credential(destination.access_key_id, stored.destination_access_key_id if same_url else None,
                                    "destination.accessKeyId", errors)
        secret_access_key = _credential(destination.secret_access_key,
                                        stored.destination_secret_access_key if same_url else None,
                                        "destination.secretAccessKey", errors)
        url, region = destination.url, destination.region
    if errors:
        raise ValidationFailed(errors)
    policy = stored or BackupPolicy(agent=agent)
    policy.destination_url, policy.destination_region = url, region
    policy.destination_access_key_id, policy.destination_secret_access_key = access_key_id, secret_access_key
    policy.schedule, policy.keep = schedule, keep
    policy.next_run_at = next_run_after(schedule, timezone.now())
    policy.save()
    return policy


def _credential(written: str, stored: str | None, field: str, errors: dict[str, str]) -> str | None:
    if not keeps_stored(written):
        return written
    if not stored:
        errors[field] = NOTHING_TO_KEEP
    return stored


@transaction.atomic
def backup_policy_delete(*, agent: Agent) -> bool:
    """No more scheduled backups of the agent; the backups made stay. Whether there was one."""
    deleted, _ = BackupPolicy.objects.filter(agent=agent).delete()
    return bool(deleted)
