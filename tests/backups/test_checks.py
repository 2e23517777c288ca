"""`manage.py check` refuses a BACKUP_STORAGE_URL no backup could be stored at, naming no secret."""

import pytest

from backups.checks import check_storage_url


@pytest.mark.parametrize("url", ["ftp://KEY:SECRETVALUE@host/b", "s3://KEY:SECRETVALUE@host", "file://relative"])
def test_an_unusable_storage_url_is_an_error_without_its_credentials(settings, url):
    settings.BACKUP_STORAGE_URL = url

    [error] = check_storage_url()

    assert error.id == "backups.E001" and "SECRETVALUE" not in error.msg


@pytest.mark.parametrize("url", ["file:///var/lib/fleet/backups", "s3://k:s@minio:9000/bucket/p?https=false"])
def test_a_folder_or_a_bucket_passes(settings, url):
    settings.BACKUP_STORAGE_URL = url

    assert check_storage_url() == []
