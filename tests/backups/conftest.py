"""Backups write to a folder of the test's own unless a test points them at the loopback S3
server (tests/infra/s3.py), which the outbound policy allows here as an operator would."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def backup_settings(settings, tmp_path):
    settings.BACKUP_STORAGE_URL = f"file://{tmp_path / 'backups'}"
    settings.BACKUP_RETRIES = 2
    settings.BACKUP_RETRY_DELAY_SECONDS = 0
    settings.MIGRATION_DRAFTS_DIR = str(tmp_path / "drafts")
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    return settings
