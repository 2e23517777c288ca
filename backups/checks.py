"""System checks of the backups app (`manage.py check`, and before `migrate` at release): a
BACKUP_STORAGE_URL no backup could be stored at."""

from __future__ import annotations

from django.conf import settings
from django.core import checks

from .storage import StorageUrlInvalid, storage_from_url

UNUSABLE_STORAGE_URL = "backups.E001"


@checks.register()
def check_storage_url(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    try:
        storage_from_url(settings.BACKUP_STORAGE_URL)  # parses only: nothing is reached here
    except StorageUrlInvalid as exc:
        # The message names the reason, never the URL: it may hold the storage's credentials.
        return [checks.Error(f"BACKUP_STORAGE_URL cannot be used: {exc}",
                             hint="file:///folder or s3://ACCESS:SECRET@host:port/bucket/prefix "
                                  "(docs/configuration.md).",
                             id=UNUSABLE_STORAGE_URL)]
    return []
