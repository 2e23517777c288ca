"""The two kinds of destination: a folder written atomically, and S3 through boto3 against the
loopback server: put, list, fetch, delete, and a failed upload leaving nothing behind."""

from __future__ import annotations

import io
import os

import pytest

from backups import storage as storage_module
from backups.storage import FolderStorage, StorageError, StorageUrlInvalid, s3_location_from_url, storage_from_url

MB = 1024 * 1024


class BrokenSource(io.RawIOBase):
    """A bundle whose reading fails after `good` bytes (the spool's disk failing mid-copy)."""

    def __init__(self, good: int) -> None:
        self.good, self.read_so_far = good, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset, whence=os.SEEK_SET):  # it claims twice the bytes it will give
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self.read_so_far, os.SEEK_END: self.good * 2}[whence]
        self.read_so_far = base + offset
        return self.read_so_far

    def tell(self):
        return self.read_so_far

    def readinto(self, buffer) -> int:
        if self.read_so_far >= self.good:
            raise OSError(5, "Input/output error")
        size = min(len(buffer), self.good - self.read_so_far)
        buffer[:size] = b"x" * size
        self.read_so_far += size
        return size


def test_a_folder_stores_fetches_lists_and_deletes(tmp_path):
    folder = FolderStorage(tmp_path)

    assert folder.put("agent/one.tar.gz", io.BytesIO(b"bundle bytes")) == 12
    into = io.BytesIO()
    folder.fetch("agent/one.tar.gz", into)

    assert into.getvalue() == b"bundle bytes"
    assert folder.keys("agent") == ["agent/one.tar.gz"]
    folder.delete("agent/one.tar.gz")
    folder.delete("agent/one.tar.gz")  # already gone: no error
    assert folder.keys("agent") == []


def test_a_folder_write_that_fails_leaves_neither_the_object_nor_a_partial_file(tmp_path):
    folder = FolderStorage(tmp_path)

    with pytest.raises(StorageError, match="could not be written"):
        folder.put("agent/one.tar.gz", BrokenSource(good=3 * MB))

    assert list((tmp_path / "agent").iterdir()) == []


def test_a_folder_object_appears_only_whole_under_its_name(tmp_path, monkeypatch):
    """While the copy is written, the final name does not exist: readers see nothing or all."""
    seen_during_copy = []
    real_copy = storage_module._copy

    def watching_copy(source, out):
        written = real_copy(source, out)
        seen_during_copy.append(sorted(path.name for path in (tmp_path / "agent").iterdir()))
        return written

    monkeypatch.setattr(storage_module, "_copy", watching_copy)
    FolderStorage(tmp_path).put("agent/one.tar.gz", io.BytesIO(b"x" * 1000))

    [names] = seen_during_copy
    assert len(names) == 1 and names[0].startswith(".one.tar.gz.partial-")
    assert sorted(path.name for path in (tmp_path / "agent").iterdir()) == ["one.tar.gz"]


def test_a_folder_key_cannot_leave_the_folder(tmp_path):
    with pytest.raises(StorageError, match="leaves the backup folder"):
        FolderStorage(tmp_path / "inner").put("../outside.tar.gz", io.BytesIO(b"x"))
    assert not (tmp_path / "outside.tar.gz").exists()


def test_s3_stores_lists_fetches_and_deletes_with_the_prefix(s3_server):
    bucket = storage_from_url(s3_server.storage_url("fleet/backups"))

    assert bucket.put("agent/one.tar.gz", io.BytesIO(b"bundle bytes")) == 12
    assert s3_server.keys() == ["fleet/backups/agent/one.tar.gz"]
    assert bucket.keys("agent") == ["agent/one.tar.gz"]
    into = io.BytesIO()
    bucket.fetch("agent/one.tar.gz", into)
    assert into.getvalue() == b"bundle bytes"

    bucket.delete("agent/one.tar.gz")
    assert s3_server.keys() == []


def test_s3_uploads_a_large_bundle_in_parts(s3_server, monkeypatch):
    monkeypatch.setattr(storage_module, "MULTIPART_THRESHOLD", 5 * MB)
    monkeypatch.setattr(storage_module, "MULTIPART_CHUNK", 5 * MB)
    data = os.urandom(12 * MB)

    assert storage_from_url(s3_server.storage_url()).put("big.tar.gz", io.BytesIO(data)) == len(data)

    head = s3_server.client().head_object(Bucket=s3_server.bucket, Key="big.tar.gz")
    assert head["ContentLength"] == len(data) and head["ETag"].strip('"').endswith("-3")  # three parts


def test_a_failed_multipart_upload_leaves_no_object_and_no_upload_in_progress(s3_server, monkeypatch):
    monkeypatch.setattr(storage_module, "MULTIPART_THRESHOLD", 5 * MB)
    monkeypatch.setattr(storage_module, "MULTIPART_CHUNK", 5 * MB)

    with pytest.raises((StorageError, OSError)):
        storage_from_url(s3_server.storage_url()).put("big.tar.gz", BrokenSource(good=12 * MB))

    assert s3_server.keys() == []
    assert s3_server.uploads_in_progress() == []


def test_s3_down_is_a_storage_error_naming_no_credential(s3_server_own):
    bucket = storage_from_url(s3_server_own.storage_url())
    s3_server_own.stop()

    with pytest.raises(StorageError) as refused:
        bucket.put("agent/one.tar.gz", io.BytesIO(b"x"))

    assert "could not be stored" in str(refused.value)
    assert all(secret not in str(refused.value) for secret in bucket.secrets)


def test_storage_urls_are_read_with_their_defaults():
    location = s3_location_from_url("s3://AK%2F1:S%40CRET@minio.internal:9000/bucket/a/b?region=eu-west-1")
    assert (location.endpoint_url, location.bucket, location.prefix) == ("https://minio.internal:9000", "bucket", "a/b")
    assert (location.access_key_id, location.secret_access_key, location.region) == ("AK/1", "S@CRET", "eu-west-1")
    assert s3_location_from_url(location.url()) == location
    assert s3_location_from_url("s3://a:b@h/bk?https=false").endpoint_url == "http://h"
    for wrong in ("ftp://x/y", "file://relative", "s3://a:b@host"):
        with pytest.raises(StorageUrlInvalid):
            storage_from_url(wrong)
