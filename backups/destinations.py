"""Which storage a backup goes to and is read from: the operator's BACKUP_STORAGE_URL (a folder
or a bucket), or the S3-compatible endpoint a policy names (`https://host:port/bucket/prefix`
with its own credentials), checked by the outbound policy (fleet.netsafety) when it is set and
again at every use. An API user never names a folder: the server's disk is the operator's."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings

from fleet.netsafety import UnsafeTarget, check_url

from .models import Backup, BackupPolicy
from .storage import S3Location, Storage, storage_from_url


def destination_url_error(url: str) -> str | None:
    """Why a policy's endpoint URL cannot be used, or None: http(s), no credentials in it, a
    bucket as its first path segment, a host the outbound policy allows."""
    try:
        parts = check_url(url)
    except UnsafeTarget as exc:
        return str(exc)
    if not parts.path.strip("/"):
        return "Name the bucket as the URL's path: https://host:port/bucket[/prefix]."
    if parts.query or parts.fragment:
        return "The URL takes no query or fragment; the region is a field of its own."
    return None


def policy_location(policy: BackupPolicy) -> S3Location | None:
    """The policy's own bucket, or None when its backups go to BACKUP_STORAGE_URL."""
    if not policy.destination_url:
        return None
    parts = urlsplit(policy.destination_url)
    bucket, _, prefix = parts.path.strip("/").partition("/")
    return S3Location(endpoint_url=f"{parts.scheme}://{parts.netloc}", bucket=bucket, prefix=prefix.strip("/"),
                      access_key_id=policy.destination_access_key_id or "",
                      secret_access_key=policy.destination_secret_access_key or "",
                      region=policy.destination_region)


def recorded_destination(policy: BackupPolicy | None) -> str:
    """What a new Backup records as its destination: the policy's bucket as a storage URL (with
    its credentials; the field is encrypted), or "" for BACKUP_STORAGE_URL."""
    location = policy_location(policy) if policy is not None else None
    return location.url() if location else ""


def storage_of(backup: Backup) -> Storage:
    """The storage holding `backup`'s object. A policy's endpoint is checked by the outbound
    policy before each connection; the operator's own setting is trusted."""
    if backup.storage:
        return storage_from_url(backup.storage, check_outbound=True)
    return storage_from_url(settings.BACKUP_STORAGE_URL)


def object_key_for(backup: Backup) -> str:
    """Where a backup's bundle goes under the destination: one folder (prefix) per agent."""
    return f"{backup.agent_id.hex}/{backup.pk.hex}.tar.gz"
